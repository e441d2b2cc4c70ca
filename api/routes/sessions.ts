/**
 * Following and deciding a session: read it, approve / cancel / finalize when it waits for the
 * partner (Temporal Updates, validated by the workflow), and refund a finished payment.
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { SessionNotFoundError, SessionStateError } from '../../client/errors';
import * as inputs from '../../client/inputs';
import type { SessionView } from '../../workflows/types';
import type { ApiDeps } from '../deps';
import {
  explainMissingReference,
  objectBody,
  parse,
  sendCreated,
  sessionIdParam,
  waitMs,
  withLinks,
  withReference,
} from '../http';
import {
  docSchema,
  errorResponses,
  idempotencyHeader,
  SESSION_REF,
  sessionParams,
  waitQuery,
} from '../schemas';

const cancelBody = z.object({ reason: z.string().min(1).max(500).optional() });
const finalizeBody = z.object({ amount: z.number().int().positive().optional() });

const DEFAULT_REFUND_WAIT_MS = 5_000;

const decisionResponses = {
  200: { description: 'The session after the decision was carried out.', ...SESSION_REF },
  404: { description: 'No such session.', $ref: 'ApiError#' },
  409: {
    description: 'The session is not waiting for this decision (or the amount is refused).',
    $ref: 'ApiError#',
  },
  ...errorResponses,
};

export const sessionRoutes: FastifyPluginAsync<ApiDeps> = async (app, deps) => {
  const { payments } = deps;
  const links = { temporal: deps.temporal, temporalUiUrl: deps.temporalUiUrl };

  /**
   * Temporal answers "not found" to an update of a workflow that has finished: when the session
   * exists, that is a state conflict (nothing to decide any more), not a 404.
   */
  const decide = async (id: string, run: () => Promise<SessionView>) => {
    try {
      return withLinks(await run(), links);
    } catch (err) {
      if (!(err instanceof SessionNotFoundError)) throw err;
      const view = await payments.getSession(id);
      throw new SessionStateError(`session ${id} has finished (${view.phase}); there is nothing to decide`);
    }
  };

  app.get(
    '/sessions/:id',
    {
      schema: {
        tags: ['sessions'],
        summary: 'Read a session',
        security: [{ bearerAuth: [] }],
        params: sessionParams,
        response: {
          200: SESSION_REF,
          404: { description: 'No such session.', $ref: 'ApiError#' },
          ...errorResponses,
        },
      },
    },
    async (request) => withLinks(await payments.getSession(sessionIdParam(request.params)), links),
  );

  app.post(
    '/sessions/:id/approve',
    {
      schema: {
        tags: ['decisions'],
        summary: 'Approve a payment or payout waiting for approval (phase awaiting_approval)',
        security: [{ bearerAuth: [] }],
        params: sessionParams,
        response: decisionResponses,
      },
    },
    async (request) => {
      const id = sessionIdParam(request.params);
      return decide(id, () => payments.approve(id));
    },
  );

  app.post(
    '/sessions/:id/cancel',
    {
      schema: {
        tags: ['decisions'],
        summary: 'Cancel a session waiting for approval or finalization',
        security: [{ bearerAuth: [] }],
        params: sessionParams,
        body: docSchema(cancelBody),
        response: decisionResponses,
      },
    },
    async (request) => {
      const id = sessionIdParam(request.params);
      const { reason } = parse(cancelBody, objectBody(request.body));
      return decide(id, () => payments.cancel(id, reason));
    },
  );

  app.post(
    '/sessions/:id/finalize',
    {
      schema: {
        tags: ['decisions'],
        summary: 'Charge held funds, in full or in part (phase awaiting_finalization)',
        description: '`amount` in minor units, at most the held amount; omitted: the whole held amount.',
        security: [{ bearerAuth: [] }],
        params: sessionParams,
        body: docSchema(finalizeBody),
        response: decisionResponses,
      },
    },
    async (request) => {
      const id = sessionIdParam(request.params);
      const { amount } = parse(finalizeBody, objectBody(request.body));
      return decide(id, () => payments.finalize(id, amount));
    },
  );

  app.post(
    '/sessions/:id/refunds',
    {
      schema: {
        tags: ['sessions'],
        summary: 'Refund a successful payment, in full or in part',
        description:
          'Runs once the payment has finished. `amount` omitted: what is left of the payment. ' +
          'The same reference (or Idempotency-Key) returns the same refund.',
        security: [{ bearerAuth: [] }],
        params: sessionParams,
        headers: idempotencyHeader,
        querystring: waitQuery(DEFAULT_REFUND_WAIT_MS),
        body: docSchema(inputs.refundInput, { optional: ['reference'] }),
        response: {
          201: { description: 'Refund started; the session view of the refund.', ...SESSION_REF },
          200: { description: 'The refund an earlier request with this reference started.', ...SESSION_REF },
          404: { description: 'No such session.', $ref: 'ApiError#' },
          409: { description: 'No successful payment, or the session is still running.', $ref: 'ApiError#' },
          ...errorResponses,
        },
      },
    },
    async (request, reply) => {
      const receivedAt = new Date();
      const id = sessionIdParam(request.params);
      const body = withReference(request, objectBody(request.body));
      const o = { waitMs: waitMs(request.query, DEFAULT_REFUND_WAIT_MS) };
      const input = await explainMissingReference(body, async () => parse(inputs.refundInput, body));
      // A repeat is answered from the refund it started, whether it runs or has finished
      // (PaymentsClient.refund would refuse it: still running, or nothing left to refund).
      const earlier = await findRefund(deps, id, input.reference);
      if (earlier) {
        reply.header('idempotent-replayed', 'true');
        reply.header('location', `/v1/sessions/${encodeURIComponent(id)}`);
        return reply.code(200).send(withLinks(earlier, links));
      }
      const view = await explainMissingReference(body, () => payments.refund(id, input, o));
      return sendCreated(reply, view, receivedAt, links);
    },
  );
};

/** The refund with this reference in the session's lane: its latest run, else any run visibility knows. */
async function findRefund(
  deps: ApiDeps,
  sessionId: string,
  reference: string,
): Promise<SessionView | undefined> {
  const latest = await deps.payments.getSession(sessionId);
  if (latest.kind === 'refund' && latest.reference === reference) return latest;
  const query =
    `WorkflowId = '${sessionId.replace(/'/g, '')}' AND PaymentKind = 'refund' ` +
    `AND ClientReference = '${reference.replace(/'/g, '')}'`;
  for await (const wf of deps.temporal.workflow.list({ query })) {
    try {
      return (await deps.temporal.workflow.getHandle(sessionId, wf.runId).result()) as SessionView;
    } catch {
      // That run failed or is gone: let the refund be asked again (its provider key is the same).
      return undefined;
    }
  }
  return undefined;
}
