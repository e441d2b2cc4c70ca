import type { FastifyPluginAsync, FastifyPluginOptions } from 'fastify';

/**
 * Marks a plugin so that what it adds (hooks, error handler, decorators, shared schemas) applies to
 * the scope that registers it instead of a private child scope. This is what `fastify-plugin` does;
 * the two well-known symbols are fastify's own contract, so no extra dependency is needed.
 */
export function rootPlugin<O extends FastifyPluginOptions>(
  name: string,
  fn: FastifyPluginAsync<O>,
): FastifyPluginAsync<O> {
  const marked = fn as FastifyPluginAsync<O> & Record<symbol, unknown>;
  marked[Symbol.for('skip-override')] = true;
  marked[Symbol.for('fastify.display-name')] = name;
  return marked;
}
