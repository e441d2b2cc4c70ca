/**
 * The payer and the bank of `paysaga demo`, over HTTP: JSON posts to the sandbox's simulation routes,
 * and a payer that reads and submits the HTML forms of the sandbox's pages (3-D Secure) the way a
 * browser would. The demo's API calls go through the typed client (`client/http`). Nothing here
 * prints request bodies (card data travels in some).
 */
export interface JsonResponse {
  status: number;
  body: unknown;
  text: string;
}

const REQUEST_TIMEOUT_MS = 35_000;

/** POSTs JSON to a URL outside the API (sandbox simulation routes: the payer's bank, a chargeback). */
export async function postJson(url: string, body: unknown): Promise<JsonResponse> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  return readJson(res);
}

/** The status, the text, and the text parsed as JSON (undefined when it is not JSON). */
async function readJson(res: Response): Promise<JsonResponse> {
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, body: parsed, text };
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", apos: "'" };
const unescapeHtml = (s: string) =>
  s.replace(/&(amp|lt|gt|quot|#39|apos);/g, (_m, e: string) => ENTITIES[e]!);

export interface HtmlForm {
  action: string;
  method: string;
  fields: Record<string, string>;
}

/** The first form of a page with its named inputs (values as a browser would send them). */
export function firstForm(html: string, pageUrl: string): HtmlForm | undefined {
  const form = /<form\b([^>]*)>([\s\S]*?)<\/form>/i.exec(html);
  if (!form) return undefined;
  const attr = (tag: string, name: string) => {
    const m = new RegExp(`\\b${name}="([^"]*)"`, 'i').exec(tag);
    return m ? unescapeHtml(m[1]!) : undefined;
  };
  const fields: Record<string, string> = {};
  for (const input of form[2]!.matchAll(/<input\b[^>]*>/gi)) {
    const name = attr(input[0], 'name');
    if (name) fields[name] = attr(input[0], 'value') ?? '';
  }
  return {
    action: new URL(attr(form[1]!, 'action') ?? pageUrl, pageUrl).toString(),
    method: (attr(form[1]!, 'method') ?? 'GET').toUpperCase(),
    fields,
  };
}

export interface PageResponse {
  url: string;
  status: number;
  html: string;
  location?: string;
}

/** A browser-like request for a page: form-encoded fields for POST, no automatic redirects. */
export async function openPage(
  url: string,
  method: 'GET' | 'POST',
  fields: Record<string, string> = {},
): Promise<PageResponse> {
  const target = new URL(url);
  if (method === 'GET') for (const [k, v] of Object.entries(fields)) target.searchParams.set(k, v);
  const res = await fetch(target, {
    method,
    redirect: 'manual',
    headers: {
      accept: 'text/html',
      ...(method === 'POST' ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
    },
    ...(method === 'POST' ? { body: new URLSearchParams(fields).toString() } : {}),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const location = res.headers.get('location') ?? undefined;
  return {
    url: target.toString(),
    status: res.status,
    html: await res.text(),
    ...(location ? { location: new URL(location, target).toString() } : {}),
  };
}
