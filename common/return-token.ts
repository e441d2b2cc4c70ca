/**
 * The payer's return, bound to its session (DESIGN decision 14): paysaga sets each session's back_url to
 * `<public base>/return/<session id>?t=<token>`, where the token is an HMAC-SHA256 of the session id under
 * a server secret. Only paysaga can mint one, so the public return route refuses any id it did not hand
 * out without touching Temporal, and the page shows an outcome only to the holder of the token.
 *
 * Node-only (node:crypto): never imported by workflow code.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Domain separation: a token minted here is useless as any other HMAC of the same secret. */
const PURPOSE = 'paysaga-return:';

/** The token for `sessionId` under `secret` (base64url, 43 characters). */
export function returnToken(secret: string, sessionId: string): string {
  return createHmac('sha256', secret)
    .update(PURPOSE + sessionId)
    .digest('base64url');
}

/**
 * Whether `token` was minted for `sessionId` under one of `secrets` (several during a rotation; the first
 * one mints). Constant-time per secret.
 */
export function verifyReturnToken(secrets: readonly string[], sessionId: string, token: unknown): boolean {
  if (typeof token !== 'string' || token.length === 0 || token.length > 128) return false;
  const given = Buffer.from(token);
  return secrets.some((secret) => {
    const expected = Buffer.from(returnToken(secret, sessionId));
    return expected.length === given.length && timingSafeEqual(expected, given);
  });
}

/** `<publicBase>/return/<sessionId>?t=<token>`: the back_url paysaga gives the provider for this session. */
export function signedReturnUrl(publicBase: string, secret: string, sessionId: string): string {
  const url = new URL(
    `return/${encodeURIComponent(sessionId)}`,
    publicBase.endsWith('/') ? publicBase : `${publicBase}/`,
  );
  url.searchParams.set('t', returnToken(secret, sessionId));
  return url.toString();
}
