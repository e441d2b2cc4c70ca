/**
 * Bearer tokens for the partner routes. Registered inside the /v1 scope, so the webhook receiver
 * (signed by the provider) and the payer's return page (a browser) are not affected. Runs on
 * onRequest, before any body is read.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { ApiError } from '../errors';
import { rootPlugin } from './root-plugin';

export interface AuthOptions {
  tokens: string[];
}

// Comparing fixed-length digests keeps the comparison time independent of where tokens differ.
const digest = (s: string) => createHash('sha256').update(s).digest();

export const authPlugin = rootPlugin<AuthOptions>('paysaga-auth', async (app, opts) => {
  const accepted = opts.tokens.filter(Boolean).map(digest);
  app.addHook('onRequest', async (request, reply) => {
    const header = request.headers.authorization;
    const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!match) {
      reply.header('www-authenticate', 'Bearer realm="paysaga"');
      throw new ApiError(401, 'unauthorized', 'send Authorization: Bearer <API token>');
    }
    const given = digest(match[1]!);
    if (!accepted.some((t) => timingSafeEqual(t, given))) {
      reply.header('www-authenticate', 'Bearer realm="paysaga", error="invalid_token"');
      throw new ApiError(401, 'unauthorized', 'the API token is not valid');
    }
  });
});
