/**
 * Bearer tokens and their scopes for the partner routes (api/api-tokens.ts). Registered inside the /v1
 * scope, so the webhook receiver (signed by the provider) and the payer's return page (a browser) are
 * not affected. Runs on onRequest, before any body is read: a refused request changes nothing.
 *
 * Each route names the scope it needs (`config.scope`, from client/http/endpoints.ts); a route that
 * names none needs `admin`. Refusals (401, 403) are counted per client address: past
 * `maxFailures` within `windowMs`, that address gets 429 until the window ends, whatever it sends, so
 * tokens cannot be guessed at speed. Every log line of an accepted request names the token's id.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { apiToken, type ApiToken, type Scope } from '../api-tokens';
import { ApiError } from '../errors';
import { rootPlugin } from './root-plugin';

export interface AuthOptions {
  /** A plain string may do everything (an embedder's own token). */
  tokens: (string | ApiToken)[];
  /** Refusals an address may earn per window before it gets 429 (default 20 per minute). */
  failures?: { maxFailures: number; windowMs: number };
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** What a token must be allowed to do to use this route. */
    scope?: Scope;
  }
}

// Comparing fixed-length digests keeps the comparison time independent of where tokens differ.
const digest = (s: string) => createHash('sha256').update(s).digest();

/** Refusals per client address in fixed windows; bounded so a flood of addresses cannot grow it. */
class FailureCounter {
  private readonly windows = new Map<string, { until: number; count: number }>();
  constructor(private readonly o: { maxFailures: number; windowMs: number }) {}

  /** Epoch ms until which `address` is refused, or undefined. */
  blockedUntil(address: string, now = Date.now()): number | undefined {
    const w = this.windows.get(address);
    if (!w || w.until <= now) return undefined;
    return w.count >= this.o.maxFailures ? w.until : undefined;
  }

  record(address: string, now = Date.now()): void {
    const w = this.windows.get(address);
    if (w && w.until > now) {
      w.count++;
      return;
    }
    if (this.windows.size >= 10_000) {
      for (const [a, x] of this.windows) if (x.until <= now) this.windows.delete(a);
      if (this.windows.size >= 10_000) this.windows.delete(this.windows.keys().next().value!);
    }
    this.windows.set(address, { until: now + this.o.windowMs, count: 1 });
  }
}

export const authPlugin = rootPlugin<AuthOptions>('paysaga-auth', async (app, opts) => {
  const accepted = opts.tokens
    .map((t) => (typeof t === 'string' ? apiToken(t) : t))
    .filter((t) => t.token)
    .map((t) => ({ ...t, digest: digest(t.token) }));
  const failures = new FailureCounter(opts.failures ?? { maxFailures: 20, windowMs: 60_000 });

  app.addHook('onRequest', async (request, reply) => {
    const address = request.ip;
    const blocked = failures.blockedUntil(address);
    if (blocked !== undefined) {
      reply.header('retry-after', String(Math.max(1, Math.ceil((blocked - Date.now()) / 1000))));
      throw new ApiError(429, 'too_many_refusals', 'too many refused requests from this address: wait', true);
    }
    const refuse = (status: 401 | 403, message: string, challenge?: string): never => {
      failures.record(address);
      if (challenge) reply.header('www-authenticate', challenge);
      throw new ApiError(status, status === 401 ? 'unauthorized' : 'forbidden', message);
    };
    const header = request.headers.authorization;
    const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!match) return refuse(401, 'send Authorization: Bearer <API token>', 'Bearer realm="paysaga"');
    const given = digest(match[1]!);
    const token = accepted.find((t) => timingSafeEqual(t.digest, given));
    if (!token)
      return refuse(401, 'the API token is not valid', 'Bearer realm="paysaga", error="invalid_token"');
    const log = request.log.child({ tokenId: token.id });
    request.log = log;
    reply.log = log;
    // A path no route matched is a 404 for any valid token, not a 403.
    if (request.is404) return;
    const scope = request.routeOptions.config.scope ?? 'admin';
    if (!token.scopes.includes(scope))
      refuse(
        403,
        `this token may not use this route: it needs the ${scope} scope (the token has ${token.scopes.join(', ')})`,
        `Bearer realm="paysaga", error="insufficient_scope", scope="${scope}"`,
      );
  });
});
