/**
 * `POST /v1/sessions/{id}/provider-events/replay`: the session's recorded provider webhooks go through the
 * webhook routing again (client/webhook-replay.ts); what each did is answered. `paysaga webhooks replay`
 * calls it.
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { providerEventRecordView } from '../../common/views';
import { endpoints } from '../../client/http/endpoints';
import type { ApiDeps } from '../deps';
import { sessionIdParam, tableRoute } from '../http';
import { docSchema, errorResponses, sessionParams } from '../schemas';

const replayedView = z.object({
  type: z.string().describe("The provider's event type (or state_sync)"),
  receivedAt: z.string().describe('When the session first received it'),
  via: providerEventRecordView.shape.via.describe('How it first came'),
  updatedAt: z.string().optional().describe("The snapshot's updated_at"),
  replayedAt: z.string().describe('Its receive time in the audit trail as a replay'),
  delivery: z
    .enum(['signaled', 'reopened', 'already_known', 'unknown_session'])
    .describe(
      'signaled: to the running workflow; reopened: a new run took it (it was news to the closed one); ' +
        'already_known: the closed run knew it, nothing was started',
    ),
  outcome: providerEventRecordView.shape.outcome
    .optional()
    .describe('What the session made of it (its audit record): duplicate or older changes nothing'),
});

export const replayRoutes: FastifyPluginAsync<ApiDeps> = async (app, deps) => {
  tableRoute(
    app,
    endpoints.replayProviderEvents,
    {
      schema: {
        tags: ['sessions'],
        summary: "Replay the session's recorded provider webhooks",
        description:
          'Each recorded provider event (webhooks and state syncs, the latest 40) goes through the webhook ' +
          'routing again, marked `replay` in the audit trail. Sessions apply states only forward, so a ' +
          'replay changes nothing already applied: a running session records each as duplicate or older, a ' +
          'closed one that knew the state stays closed (already_known).',
        security: [{ bearerAuth: [] }],
        params: sessionParams,
        response: {
          200: docSchema(z.object({ sessionId: z.string(), events: z.array(replayedView) }), {
            io: 'output',
          }),
          404: { description: 'No such session.', $ref: 'ApiError#' },
          ...errorResponses,
        },
      },
    },
    async (request) => deps.payments.sessions.replayProviderEvents(sessionIdParam(request.params)),
  );
};
