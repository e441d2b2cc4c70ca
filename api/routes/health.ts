/** GET /healthz: 200 when Temporal answers (the API can do nothing useful without it), else 503. */
import type { Client } from '@temporalio/client';
import type { FastifyPluginAsync } from 'fastify';
import { healthView, type Health } from '../../common/views';
import { docSchema } from '../schemas';

const HEALTH_TIMEOUT_MS = 2_000;

export const healthRoutes: FastifyPluginAsync<{ temporal: Client }> = async (app, { temporal }) => {
  app.get(
    '/healthz',
    {
      schema: {
        tags: ['operations'],
        summary: 'Liveness and Temporal connectivity',
        response: {
          200: docSchema(healthView, { io: 'output', description: 'Temporal answers.' }),
          503: docSchema(healthView, {
            io: 'output',
            description: 'Temporal does not answer (`status: unavailable`).',
          }),
        },
      },
    },
    async (_request, reply) => {
      try {
        // describeNamespace also proves the namespace this API uses exists.
        await temporal.connection.withDeadline(Date.now() + HEALTH_TIMEOUT_MS, () =>
          temporal.workflowService.describeNamespace({ namespace: temporal.options.namespace }),
        );
        return { status: 'ok', temporal: 'ok' } satisfies Health;
      } catch (err) {
        return reply.code(503).send({
          status: 'unavailable',
          temporal: (err instanceof Error ? err.message.split('\n')[0] : undefined) || 'unreachable',
        } satisfies Health);
      }
    },
  );
};
