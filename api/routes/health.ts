/** GET /healthz: 200 when Temporal answers (the API can do nothing useful without it), else 503. */
import type { Client } from '@temporalio/client';
import type { FastifyPluginAsync } from 'fastify';

const HEALTH_TIMEOUT_MS = 2_000;

export const healthRoutes: FastifyPluginAsync<{ temporal: Client }> = async (app, { temporal }) => {
  app.get(
    '/healthz',
    {
      schema: {
        tags: ['operations'],
        summary: 'Liveness and Temporal connectivity',
        response: {
          200: {
            type: 'object',
            properties: { status: { type: 'string', const: 'ok' }, temporal: { type: 'string' } },
          },
          503: {
            type: 'object',
            properties: { status: { type: 'string' }, temporal: { type: 'string' } },
          },
        },
      },
    },
    async (_request, reply) => {
      try {
        // describeNamespace also proves the namespace this API uses exists.
        await temporal.connection.withDeadline(Date.now() + HEALTH_TIMEOUT_MS, () =>
          temporal.workflowService.describeNamespace({ namespace: temporal.options.namespace }),
        );
        return { status: 'ok', temporal: 'ok' };
      } catch (err) {
        return reply.code(503).send({
          status: 'unavailable',
          temporal: err instanceof Error ? err.message.split('\n')[0] : 'unreachable',
        });
      }
    },
  );
};
