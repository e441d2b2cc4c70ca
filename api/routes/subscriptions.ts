/**
 * Recurring billing over HTTP: create a subscription (named by reference or Idempotency-Key: the same
 * name is the same subscription), read it, and pause / resume / cancel / change it (Temporal Updates,
 * validated by the workflow, so a wrong state is refused at once with 409).
 */
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { z } from 'zod';
import * as inputs from '../../client/inputs';
import type { SubscriptionView } from '../../common/views';
import { endpoints } from '../../client/http/endpoints';
import type { ApiDeps } from '../deps';
import { explainMissingReference, objectBody, parse, withReference, tableRoute } from '../http';
import { docSchema, errorResponses, idempotencyHeader, refusalResponses, SUBSCRIPTION_REF } from '../schemas';

const subscriptionIdParams = z.object({
  id: z
    .string()
    .regex(/^sub-[A-Za-z0-9._:-]{4,64}$/, 'a subscription id (sub-<reference>)')
    .describe('Subscription id: `sub-<reference>`.'),
});
const idParams = docSchema(subscriptionIdParams);

const SUBSCRIPTION = SUBSCRIPTION_REF;

const notFound = { description: 'No such subscription.', $ref: 'ApiError#' };
const changeResponses = {
  200: { ...SUBSCRIPTION, description: 'The subscription after the change.' },
  404: notFound,
  409: { description: 'Not possible in the current status (e.g. canceled).', $ref: 'ApiError#' },
  ...errorResponses,
};

export const subscriptionRoutes: FastifyPluginAsync<ApiDeps> = async (app, deps) => {
  const { payments } = deps;

  const withLinks = (view: SubscriptionView) => {
    const links: Record<string, string> = {
      self: `/v1/subscriptions/${encodeURIComponent(view.subscriptionId)}`,
    };
    if (deps.temporalUiUrl) {
      const ns = encodeURIComponent(deps.temporal.options.namespace);
      links.temporal = `${deps.temporalUiUrl.replace(/\/+$/, '')}/namespaces/${ns}/workflows/${encodeURIComponent(view.subscriptionId)}`;
    }
    return { ...view, links };
  };
  const idOf = (params: unknown) => parse(subscriptionIdParams, params).id;
  const action = (summary: string, description: string, body?: z.ZodType, name?: string) => ({
    schema: {
      tags: ['subscriptions'],
      summary,
      description,
      security: [{ bearerAuth: [] }],
      params: idParams,
      ...(body ? { body: docSchema(body, name ? { name } : {}) } : {}),
      response: changeResponses,
    },
  });

  tableRoute(
    app,
    endpoints.createSubscription,
    {
      schema: {
        tags: ['subscriptions'],
        summary: 'Start a subscription (recurring billing by token)',
        description:
          'Charges `amount` with a recurring token (merchant-initiated, no payer action) on a calendar ' +
          '`schedule`: `{interval: second|minute|hour|day|week|month|year, count, anchor, timeZone}`. ' +
          'Due dates are counted from the anchor (default now), never from when a charge finished: ' +
          'monthly on the 31st bills the last day of shorter months and the 31st after. Optional ' +
          '`trialEnd` (no charge before it), `endAfterPeriods` or `endAt` (then the subscription is ' +
          '`ended`). The older `intervalMs` (fixed milliseconds, with `firstChargeAt`) still works; send ' +
          'one of the two. A failed charge is retried after each of ' +
          '`dunning.retryDelaysMs` (default 1, 3, 7 days); then the subscription is past_due and ' +
          '`dunning.onExhausted` cancels it (default) or leaves it past_due until resumed. The same ' +
          '`reference` (or Idempotency-Key) returns the same subscription.',
        security: [{ bearerAuth: [] }],
        headers: idempotencyHeader,
        body: docSchema(inputs.subscriptionInput, { optional: ['reference'], name: 'SubscriptionRequest' }),
        response: {
          201: { ...SUBSCRIPTION, description: 'Created (Location: /v1/subscriptions/{id}).' },
          200: {
            ...SUBSCRIPTION,
            description:
              'The subscription an earlier request with the same reference created (Idempotent-Replayed: true).',
          },
          409: refusalResponses[409],
          ...errorResponses,
        },
      },
    },
    async (request, reply: FastifyReply) => {
      const body = withReference(request, objectBody(request.body));
      const view = await explainMissingReference(body, () =>
        payments.subscriptions.start(body as inputs.SubscriptionStartInput),
      );
      reply.header('location', `/v1/subscriptions/${encodeURIComponent(view.subscriptionId)}`);
      if (!view.created) reply.header('idempotent-replayed', 'true');
      return reply.code(view.created ? 201 : 200).send(withLinks(view));
    },
  );

  tableRoute(
    app,
    endpoints.getSubscription,
    {
      schema: {
        tags: ['subscriptions'],
        summary: 'Read a subscription',
        security: [{ bearerAuth: [] }],
        params: idParams,
        response: { 200: SUBSCRIPTION, 404: notFound, ...errorResponses },
      },
    },
    async (request) => withLinks(await payments.subscriptions.get(idOf(request.params))),
  );

  tableRoute(
    app,
    endpoints.pauseSubscription,
    action(
      'Pause a subscription',
      'No charge while paused; periods that fall due meanwhile are not charged.',
    ),
    async (request) => withLinks(await payments.subscriptions.pause(idOf(request.params))),
  );

  tableRoute(
    app,
    endpoints.resumeSubscription,
    action(
      'Resume a paused or past_due subscription',
      'A calendar schedule keeps its billing day: the next charge is the first due date from now ' +
        '(periods that fell due while paused are not charged); `restart: true` bills from now on ' +
        '(charged at once, the schedule anchored there). With intervalMs, a due time that has passed is ' +
        'charged at once.',
      inputs.subscriptionResumeInput,
      'ResumeSubscriptionRequest',
    ),
    async (request) => {
      const id = idOf(request.params);
      const options = parse(inputs.subscriptionResumeInput, objectBody(request.body));
      return withLinks(await payments.subscriptions.resume(id, options));
    },
  );

  tableRoute(
    app,
    endpoints.cancelSubscription,
    action(
      'Cancel a subscription',
      'No further charge; a charge already started finishes.',
      inputs.subscriptionCancelInput,
      'CancelSubscriptionRequest',
    ),
    async (request) => {
      const id = idOf(request.params);
      const { reason } = parse(inputs.subscriptionCancelInput, objectBody(request.body));
      return withLinks(await payments.subscriptions.cancel(id, reason));
    },
  );

  tableRoute(
    app,
    endpoints.changeSubscription,
    action(
      'Change amount, token, schedule or interval',
      'Amount and schedule apply from `fromPeriod` (default: the first period not started yet; a ' +
        'charge already started, or being retried, keeps its amount). A new schedule keeps the billing ' +
        'day and time unless it has an anchor; its first period falls due on its first date after the ' +
        'previous due date, never before the change. A new token is used from the next attempt (a ' +
        'dunning retry included). intervalMs only changes subscriptions started with it.',
      inputs.subscriptionChangeInput,
      'ChangeSubscriptionRequest',
    ),
    async (request) => {
      const id = idOf(request.params);
      const change = parse(inputs.subscriptionChangeInput, objectBody(request.body));
      return withLinks(await payments.subscriptions.change(id, change));
    },
  );
};
