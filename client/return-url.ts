/**
 * The back_url paysaga gives the provider for a session (docs/decisions/014-two-listeners.md): its own public
 * return page,
 * `<public URL>/return/<session id>?t=<token>`, the token an HMAC of the session id
 * (platform/return-token.ts). It needs the session id, so it is sent with start/checkout (whose values add to
 * or replace those of initiate), never at initiate. Nothing depends on the provider adding parameters to it.
 */
import { signedReturnUrl } from '../platform/return-token';

/** Anything that can name a session's return page (a ReturnUrls, or one bound late by the API). */
export interface SessionReturnUrls {
  forSession(sessionId: string): string;
}

export class ReturnUrls implements SessionReturnUrls {
  readonly publicUrl: string;
  private readonly secret: string;

  /**
   * @param publicUrl where the provider and payers reach the public listener (PAYSAGA_PUBLIC_URL)
   * @param secrets PAYSAGA_RETURN_SECRETS: the first mints, every one verifies (rotation)
   */
  constructor(publicUrl: string, secrets: readonly string[]) {
    const url = new URL(publicUrl); // throws on a malformed URL, at startup rather than per payer
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new Error(`PAYSAGA_PUBLIC_URL must be an http(s) URL, got ${publicUrl}`);
    if (url.search || url.hash)
      throw new Error(`PAYSAGA_PUBLIC_URL must be a base URL without query or fragment, got ${publicUrl}`);
    const secret = secrets[0];
    if (!secret) throw new Error('PAYSAGA_RETURN_SECRETS is empty: give at least one secret');
    this.publicUrl = publicUrl;
    this.secret = secret;
  }

  forSession(sessionId: string): string {
    return signedReturnUrl(this.publicUrl, this.secret, sessionId);
  }
}

/** PAYSAGA_RETURN_SECRETS: comma-separated; a secret shorter than 16 characters is refused. */
export function returnSecretsFromEnv(env: NodeJS.ProcessEnv = process.env): string[] {
  const secrets = (env.PAYSAGA_RETURN_SECRETS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (secrets.some((s) => s.length < 16))
    throw new Error(
      'PAYSAGA_RETURN_SECRETS: every secret must be at least 16 characters (use 32 random bytes)',
    );
  return secrets;
}

/**
 * Return URLs whose base is known only once the public listener listens (port 0, or PAYSAGA_PUBLIC_URL
 * derived from its address): checkouts arrive after that, so `forSession` is called only then.
 */
export class DeferredReturnUrls implements SessionReturnUrls {
  private urls: ReturnUrls | undefined;

  resolve(urls: ReturnUrls): void {
    this.urls = urls;
  }

  get resolved(): ReturnUrls | undefined {
    return this.urls;
  }

  forSession(sessionId: string): string {
    if (!this.urls) throw new Error('return URLs are not known yet: the public listener is not listening');
    return this.urls.forSession(sessionId);
  }
}
