/**
 * 405 Method Not Allowed, with `Allow`, for a path that exists under another method (RFC 9110 15.5.6).
 * fastify answers 404 there (its router knows paths only per method); callers and API fuzzers rightly
 * expect 405, so a wrong method tells them the route exists. Runs before body parsing, so a method
 * fastify cannot route at all (QUERY without a content type) gets the same answer.
 */
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../errors';
import { rootPlugin } from './root-plugin';

interface KnownPath {
  pattern: RegExp;
  methods: Set<string>;
}

/** A fastify route path (`/v1/sessions/:id`, `/files/*`) as an anchored regular expression. */
function pathPattern(url: string): RegExp {
  const parts = url.split('/').map((part) => {
    if (part.startsWith(':')) return '[^/]+';
    if (part === '*') return '.*';
    return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  });
  return new RegExp(`^${parts.join('/')}/?$`);
}

export const methodNotAllowedPlugin = rootPlugin('paysaga-method-not-allowed', async (app) => {
  const known = new Map<string, KnownPath>();
  app.addHook('onRoute', (route) => {
    const path = known.get(route.url) ?? { pattern: pathPattern(route.url), methods: new Set<string>() };
    for (const method of [route.method].flat()) path.methods.add(method);
    // fastify answers HEAD for every GET route (exposeHeadRoutes)
    if (path.methods.has('GET')) path.methods.add('HEAD');
    known.set(route.url, path);
  });

  const allowed = (request: FastifyRequest): string[] => {
    const pathname = request.url.split('?')[0]!;
    const methods = new Set<string>();
    for (const { pattern, methods: m } of known.values())
      if (pattern.test(pathname)) for (const method of m) methods.add(method);
    return [...methods].sort();
  };

  app.addHook('onRequest', async (request, reply) => {
    if (!request.is404) return;
    const methods = allowed(request);
    if (methods.length === 0 || methods.includes(request.method)) return;
    reply.header('allow', methods.join(', '));
    throw new ApiError(
      405,
      'method_not_allowed',
      `${request.method} is not allowed here: ${methods.join(', ')}`,
    );
  });
});
