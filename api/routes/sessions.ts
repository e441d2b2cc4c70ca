/**
 * Following and deciding a session: read it (or wait for its next change), approve / cancel / finalize
 * when it waits for the partner (Temporal Updates, validated by the workflow: a decision is accepted only
 * where it will be carried out), refund a finished payment, and read its webhook audit trail.
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import * as inputs from '../../client/inputs';
import type { DecisionResult } from '../../client/sessions';
import { providerEventRecordView } from '../../common/views';
import { endpoints } from '../../client/http/endpoints';
import type { ApiDeps } from '../deps';
import {
  explainMissingReference,
  MAX_WAIT_MS,
  objectBody,
  parse,
  sendCreated,
  sessionIdParam,
  waitMs,
  withLinks,
  withReference,
  tableRoute,
} from '../http';
import {
  docSchema,
  errorResponses,
  idempotencyHeader,
  SESSION_REF,
  sessionParams,
  waitQuery,
} from '../schemas';

const payoutNamed = {
  payout: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .describe(
      'A session of several payouts: the reference of the payout this decision is for (409 ' +
        'payout_not_waiting unless it is the one waiting)',
    ),
};
const approveBody = z.object(payoutNamed);
const cancelBody = z.object({ reason: z.string().min(1).max(500).optional(), ...payoutNamed });
const finalizeBody = z.object({ amount: z.number().int().positive().optional() });
const readQuery = z.object({
  wait: z.coerce.number().int().min(0).max(MAX_WAIT_MS).optional(),
  after: z.coerce.number().int().min(0).optional(),
});

const DEFAULT_REFUND_WAIT_MS = 5_000;

const notFound = { description: 'No such session.', $ref: 'ApiError#' };
const decisionResponses = {
  200: { description: 'The session after the provider carried out the decision.', ...SESSION_REF },
  202: {
    description:
      'Accepted and still being carried out (the provider has not answered yet): follow the session.',
    ...SESSION_REF,
  },
  404: notFound,
  409: {
    description:
      'Not possible now: the policy is automatic, the session does not wait for this decision, another ' +
      'decision is under way, the session has ended, a finalize amount is above the hold (code exceeds_held), ' +
      'or the provider refused it (code provider_refused).',
    $ref: 'ApiError#',
  },
  ...errorResponses,
};

export const sessionRoutes: FastifyPluginAsync<ApiDeps> = async (app, deps) => {
  const { payments } = deps;
  const links = { temporal: deps.temporal, temporalUiUrl: deps.temporalUiUrl };
  const answer = (reply: { code(n: number): unknown }, view: DecisionResult) => {
    if (view.accepted) reply.code(202);
    return withLinks(view, links);
  };

  tableRoute(
    app,
    endpoints.getSession,
    {
      schema: {
        tags: ['sessions'],
        summary: 'Read a session, or wait for its next change',
        description:
          '`wait` (ms, up to 25000): answer at the next change after version `after` (default: the ' +
          'current version), or when `wait` runs out. A long poll, so nobody needs a polling loop.',
        security: [{ bearerAuth: [] }],
        params: sessionParams,
        querystring: docSchema(readQuery),
        response: { 200: SESSION_REF, 404: notFound, ...errorResponses },
      },
    },
    async (request) => {
      const id = sessionIdParam(request.params);
      const q = parse(readQuery, request.query ?? {});
      const view = q.wait
        ? await payments.sessions.waitForChange(id, {
            timeoutMs: q.wait,
            ...(q.after !== undefined ? { afterVersion: q.after } : {}),
          })
        : await payments.sessions.get(id);
      return withLinks(view, links);
    },
  );

  tableRoute(
    app,
    endpoints.listProviderEvents,
    {
      schema: {
        tags: ['sessions'],
        summary: "The session's webhook audit trail",
        description:
          'Every verified provider event the session received (webhooks, state syncs, replays): type, ' +
          'receive time, and whether it was applied or a duplicate or older than what was known.',
        security: [{ bearerAuth: [] }],
        params: sessionParams,
        response: {
          200: docSchema(z.object({ events: z.array(providerEventRecordView) }), { io: 'output' }),
          404: notFound,
          ...errorResponses,
        },
      },
    },
    async (request) => ({ events: await payments.sessions.providerEvents(sessionIdParam(request.params)) }),
  );

  tableRoute(
    app,
    endpoints.approveSession,
    {
      schema: {
        tags: ['decisions'],
        summary: 'Approve a payment or payout waiting for a manual approval',
        security: [{ bearerAuth: [] }],
        params: sessionParams,
        body: docSchema(approveBody, { name: 'ApproveRequest' }),
        response: decisionResponses,
      },
    },
    async (request, reply) => {
      const id = sessionIdParam(request.params);
      const { payout } = parse(approveBody, objectBody(request.body));
      return answer(reply, await payments.sessions.approve(id, payout !== undefined ? { payout } : {}));
    },
  );

  tableRoute(
    app,
    endpoints.cancelSession,
    {
      schema: {
        tags: ['decisions'],
        summary: 'Cancel a session waiting for a manual approval or finalization (a hold is released)',
        security: [{ bearerAuth: [] }],
        params: sessionParams,
        body: docSchema(cancelBody, { name: 'CancelRequest' }),
        response: decisionResponses,
      },
    },
    async (request, reply) => {
      const id = sessionIdParam(request.params);
      const { reason, payout } = parse(cancelBody, objectBody(request.body));
      return answer(
        reply,
        await payments.sessions.cancel(id, reason, payout !== undefined ? { payout } : {}),
      );
    },
  );

  tableRoute(
    app,
    endpoints.finalizeSession,
    {
      schema: {
        tags: ['decisions'],
        summary: 'Charge held funds, in full or in part (manual finalization)',
        description: '`amount` in minor units, at most the held amount; omitted: the whole held amount.',
        security: [{ bearerAuth: [] }],
        params: sessionParams,
        body: docSchema(finalizeBody, { name: 'FinalizeRequest' }),
        response: decisionResponses,
      },
    },
    async (request, reply) => {
      const id = sessionIdParam(request.params);
      const { amount } = parse(finalizeBody, objectBody(request.body));
      return answer(reply, await payments.sessions.finalize(id, amount));
    },
  );

  tableRoute(
    app,
    endpoints.addPayout,
    {
      schema: {
        tags: ['sessions'],
        summary: 'Add a payout to a payout session',
        description:
          'Queued in the session and sent once the payouts before it have ended, with its own approval ' +
          'and result (`payouts` of the session). Only while the session has not ended; to a token or an ' +
          "FPS account, in the session's currency. The same reference (or Idempotency-Key) is the same " +
          'payout.',
        security: [{ bearerAuth: [] }],
        params: sessionParams,
        headers: idempotencyHeader,
        body: docSchema(inputs.sessionPayoutInput, { optional: ['reference'], name: 'SessionPayoutRequest' }),
        response: {
          201: { description: 'Added: the session with the payout queued.', ...SESSION_REF },
          200: { description: 'The payout an earlier request with this reference added.', ...SESSION_REF },
          404: notFound,
          409: {
            description:
              'Not a payout session, the session has ended, it holds the most payouts it may, the payout is ' +
              "in another currency than the session's (code currency_mismatch), or the reference names " +
              'another payout.',
            $ref: 'ApiError#',
          },
          ...errorResponses,
        },
      },
    },
    async (request, reply) => {
      const id = sessionIdParam(request.params);
      const body = withReference(request, objectBody(request.body));
      const view = await explainMissingReference(body, () =>
        payments.payouts.add(id, body as inputs.SessionPayoutInput),
      );
      return sendCreated(reply, view, links);
    },
  );

  tableRoute(
    app,
    endpoints.createRefund,
    {
      schema: {
        tags: ['sessions'],
        summary: 'Refund a successful payment, in full or in part',
        description:
          '`amount` omitted: what is left (captured, less refunds and chargebacks). Refunds are ' +
          'operations of the session; the same reference (or Idempotency-Key) is the same refund.',
        security: [{ bearerAuth: [] }],
        params: sessionParams,
        headers: idempotencyHeader,
        querystring: waitQuery(DEFAULT_REFUND_WAIT_MS),
        body: docSchema(inputs.refundInput, { optional: ['reference'], name: 'RefundRequest' }),
        response: {
          201: { description: 'Refund taken by the provider; the session with it.', ...SESSION_REF },
          200: { description: 'The refund an earlier request with this reference made.', ...SESSION_REF },
          404: notFound,
          409: {
            description:
              'No successful payment, nothing left, more than is left (code exceeds_refundable), the ' +
              'reference names another refund, or the provider refused it.',
            $ref: 'ApiError#',
          },
          ...errorResponses,
        },
      },
    },
    async (request, reply) => {
      const id = sessionIdParam(request.params);
      const body = withReference(request, objectBody(request.body));
      const o = { waitMs: waitMs(request.query, DEFAULT_REFUND_WAIT_MS) };
      const view = await explainMissingReference(body, () =>
        payments.refunds.create(id, body as inputs.RefundRequestInput, o),
      );
      return sendCreated(reply, view, links);
    },
  );
};
