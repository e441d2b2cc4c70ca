/**
 * The payer's return, bound to its session (docs/decisions/014-two-listeners.md): paysaga sets each session's
 * back_url to
 * `<public base>/return/<session id>?t=<token>`, where the token is an expiry and an HMAC-SHA256 of the
 * session id and that expiry under a server secret. Only paysaga can mint one, so the public return route
 * refuses any id it did not hand out without touching Temporal, and the page shows an outcome only to the
 * holder of the token.
 *
 * Node-only (node:crypto): never imported by workflow code.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Domain separation: a token minted here is useless as any other HMAC of the same secret. */
const PURPOSE = 'paysaga-return:';

/**
 * How long a return link works: longer than any session waits for its payer (the API refuses payer
 * deadlines over 30 days), so no payer of a live session meets an expired one, while a link found in a
 * browser history or a log months later shows nothing.
 */
export const RETURN_TOKEN_TTL_MS = 31 * 24 * 3_600_000;

const mac = (secret: string, sessionId: string, expires: string) =>
  createHmac('sha256', secret).update(`${PURPOSE}${sessionId}:${expires}`).digest('base64url');

/** The token for `sessionId` under `secret`: `<expiry, epoch ms base 36>.<HMAC of id and expiry>`. */
export function returnToken(
  secret: string,
  sessionId: string,
  expiresAtMs = Date.now() + RETURN_TOKEN_TTL_MS,
): string {
  const expires = Math.floor(expiresAtMs).toString(36);
  return `${expires}.${mac(secret, sessionId, expires)}`;
}

/**
 * Whether `token` was minted for `sessionId` under one of `secrets` (several during a rotation; the first
 * one mints) and has not expired. Constant-time per secret.
 */
export function verifyReturnToken(
  secrets: readonly string[],
  sessionId: string,
  token: unknown,
  nowMs = Date.now(),
): boolean {
  if (typeof token !== 'string' || token.length === 0 || token.length > 128) return false;
  const match = /^([0-9a-z]{1,12})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!match || parseInt(match[1]!, 36) <= nowMs) return false;
  const given = Buffer.from(match[2]!);
  return secrets.some((secret) => {
    const expected = Buffer.from(mac(secret, sessionId, match[1]!));
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
