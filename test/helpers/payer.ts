/** Plays the payer over plain HTTP: the 3-D Secure page and the FPS bank app of the sandbox. */
import { request } from 'undici';
import type { UserAction } from '../../provider/schemas';

function formFields(html: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const m of html.matchAll(/<input[^>]*>/gi)) {
    const name = /name="([^"]*)"/i.exec(m[0])?.[1];
    if (name) fields[name] = /value="([^"]*)"/i.exec(m[0])?.[1] ?? '';
  }
  return fields;
}

/**
 * Opens the 3-DS page the way user_action says (method, extra params), submits `code`, and returns
 * where the page sends the payer back (back_url, by GET redirect or an auto-posted form).
 */
/** The 3-D Secure page did not open (a closed page answers 404). */
export class PageNotServedError extends Error {
  constructor(readonly status: number) {
    super(`3-DS page not served (${status})`);
  }
}

export async function completeThreeDs(
  action: UserAction | undefined,
  code: string,
): Promise<{ status: number; location?: string; html: string }> {
  const dest = action?.destination_info;
  if (!dest) throw new Error(`no 3-DS redirect in user_action: ${JSON.stringify(action)}`);
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries({ ...dest.additional_params, ...dest.extra_params }))
    params.set(k, String(v));
  const opened =
    dest.http_method === 'POST'
      ? await request(dest.url_address, {
          method: 'POST',
          body: params.toString(),
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        })
      : await request(dest.url_address, { method: 'GET' });
  const page = await opened.body.text();
  const action_ = /<form[^>]*action="([^"]*)"/i.exec(page)?.[1];
  if (opened.statusCode !== 200 || !action_) throw new PageNotServedError(opened.statusCode);
  const fields = { ...formFields(page), code };
  const submitted = await request(new URL(action_, dest.url_address).toString(), {
    method: 'POST',
    body: new URLSearchParams(fields).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  const html = await submitted.body.text();
  const location = submitted.headers.location as string | undefined;
  return { status: submitted.statusCode, ...(location ? { location } : {}), html };
}

/** The payer pays the FPS QR in the bank app (sandbox simulation route). */
export async function payFpsQr(sandboxUrl: string, paymentId: string): Promise<number> {
  const res = await request(`${sandboxUrl}/sandbox/fps/${paymentId}/pay`, {
    method: 'POST',
    body: '{}',
    headers: { 'content-type': 'application/json' },
  });
  await res.body.dump();
  return res.statusCode;
}
