/**
 * The `qr_image` of an FPS payment: a base64 SVG that shows the deep link. It is not a scannable QR code
 * (no QR encoder among the dependencies); payers in the sandbox follow qr_content instead.
 */
export function qrImage(content: string): string {
  const esc = content.replace(/[<>&"]/g, (c) => `&#${c.charCodeAt(0)};`);
  const svg =
    '<svg xmlns="http://www.w3.org/2000/svg" width="320" height="320" viewBox="0 0 320 320">' +
    '<rect width="320" height="320" fill="#fff" stroke="#000" stroke-width="8"/>' +
    '<text x="160" y="150" font-family="monospace" font-size="20" text-anchor="middle">SANDBOX FPS QR</text>' +
    `<text x="160" y="185" font-family="monospace" font-size="9" text-anchor="middle">${esc}</text></svg>`;
  return Buffer.from(svg).toString('base64');
}
