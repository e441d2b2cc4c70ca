/** Minimal HTML for the payer-facing pages of the sandbox (3-D Secure, widgets, FPS bank app). */

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function page(title: string, body: string): string {
  return (
    '<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">' +
    `<title>${escapeHtml(title)}</title>` +
    '<style>body{font-family:sans-serif;max-width:28rem;margin:2rem auto}label{display:block;margin:.5rem 0}' +
    'input{font-size:1rem;padding:.3rem}button{font-size:1rem;padding:.4rem 1rem}.note{color:#666;font-size:.85rem}</style>' +
    `</head><body><h1>${escapeHtml(title)}</h1>${body}</body></html>`
  );
}

export function hiddenFields(fields: Record<string, string>): string {
  return Object.entries(fields)
    .map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`)
    .join('');
}

/** A page that POSTs `fields` to `action` as soon as it loads (and offers a button without scripts). */
export function autoPostPage(title: string, action: string, fields: Record<string, string>): string {
  return page(
    title,
    `<form id="return" method="POST" action="${escapeHtml(action)}">${hiddenFields(fields)}` +
      '<button type="submit">Continue</button></form>' +
      '<script>document.getElementById("return").submit()</script>',
  );
}
