/**
 * Recurring billing over HTTP (docs/billing.md): create a subscription (named by reference or
 * Idempotency-Key: the same name is the same subscription), read it and its billing periods, and pause /
 * resume / cancel / change it, collect or write off what is owed (Temporal Updates, validated by the
 * workflow, so a wrong state is refused at once with 409).
 */
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { z } from 'zod';
import * as inputs from '../../client/subscription-inputs';
import { periodPageView, type SubscriptionView } from '../../common/views';
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
          '`schedule`: `{interval: day|week|month|year, count, anchor, timeZone}` (second, minute and hour ' +
          "only with the provider's test environment). Due dates are counted from the anchor (default now) " +
          "in `timeZone` (default UTC, shown in the answer); an anchor whose offset is not the zone's is a " +
          '400. Monthly on the 31st bills the last day of shorter months and the 31st after. Optional ' +
          '`trialEnd` (no charge before it; at most two years ahead), `endAfterPeriods` or `endAt`. ' +
          '`dunning`: soft declines retried after `retryDelaysMs` (default 1, 3, 7 days), hard declines ' +
          'never (a new token is needed), provider-unavailable results always; a period unpaid after its ' +
          'retries is owed, then `onExhausted` (cancel, pause, continue). `policy`: `owed` ' +
          '(collect_with_next, leave_open, write_off), `catchUp` (one, all), `proration` (none, ' +
          'next_invoice), `spacingMs`. See docs/billing.md. The same `reference` (or Idempotency-Key) ' +
          'returns the same subscription.',
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
    endpoints.listSubscriptionPeriods,
    {
      schema: {
        tags: ['subscriptions'],
        summary: "A subscription's billing periods, each with its charge attempts",
        description:
          'Every period the subscription has taken, by number: due, attempted, paid, owed or written_off, ' +
          'with each attempt (on the due date, a dunning retry, a collection) and how a failure was ' +
          'classed. `status=owed` lists what is owed. Read from the store.',
        security: [{ bearerAuth: [] }],
        params: idParams,
        querystring: docSchema(inputs.periodQueryInput),
        response: { 200: docSchema(periodPageView, { io: 'output' }), 404: notFound, ...errorResponses },
      },
    },
    async (request) => {
      const id = idOf(request.params);
      const query = parse(inputs.periodQueryInput, request.query ?? {});
      return payments.subscriptions.periods(id, query);
    },
  );

  /** A change to one subscription (a Temporal Update): the body read by `input`, carried out by `run`. */
  const subscriptionChange = <S extends z.ZodType>(
    endpoint: Parameters<typeof tableRoute>[1],
    doc: { summary: string; description: string; name: string },
    input: S,
    run: (id: string, body: z.output<S>) => Promise<SubscriptionView>,
  ) =>
    tableRoute(app, endpoint, action(doc.summary, doc.description, input, doc.name), async (request) =>
      withLinks(await run(idOf(request.params), parse(input, objectBody(request.body)))),
    );

  subscriptionChange(
    endpoints.pauseSubscription,
    {
      summary: 'Pause a subscription',
      description:
        'No charge while paused, and no period falls due meanwhile. `resumeAt` (ISO 8601, at most two ' +
        'years ahead): resumes on its own then, keeping the billing day.',
      name: 'PauseSubscriptionRequest',
    },
    inputs.subscriptionPauseInput,
    (id, options) =>
      payments.subscriptions.pause(id, {
        ...(options.resumeAt !== undefined ? { resumeAt: new Date(options.resumeAt).toISOString() } : {}),
      }),
  );

  subscriptionChange(
    endpoints.resumeSubscription,
    {
      summary: 'Resume a paused or past_due subscription, or keep one that was to cancel at its period end',
      description:
        'The billing day stays: the next charge is the first due date from now (no period fell due while ' +
        'paused); `restart: true` bills from now on (charged at once, the schedule anchored there). On an ' +
        'active subscription with a cancel at the period end, the cancel is withdrawn.',
      name: 'ResumeSubscriptionRequest',
    },
    inputs.subscriptionResumeInput,
    (id, options) => payments.subscriptions.resume(id, options),
  );

  subscriptionChange(
    endpoints.cancelSubscription,
    {
      summary: 'Cancel a subscription, at once or at the end of the period paid for',
      description:
        'At once: no further period falls due; a charge already started finishes; a period in dunning is ' +
        'owed. `atPeriodEnd: true`: nothing is charged after the period paid for, and the subscription is ' +
        'canceled when the next one would fall due (`subscription.cancel_scheduled`, then ' +
        '`subscription.canceled` with `cancelation.atPeriodEnd`).',
      name: 'CancelSubscriptionRequest',
    },
    inputs.subscriptionCancelInput,
    (id, options) => payments.subscriptions.cancel(id, options),
  );

  subscriptionChange(
    endpoints.changeSubscription,
    {
      summary: 'Change amount, token, payer details or schedule',
      description:
        'Amount and schedule apply from `fromPeriod` (default: the next period to fall due; one already ' +
        'taken keeps its amount). A new schedule keeps the billing day, time and zone unless it names ' +
        'others; its first period falls due on its first date after the previous due date, never before ' +
        "the change. `proration: next_invoice` (or the subscription's policy) credits the unused part of " +
        'the running period and charges the new terms up to the next due date, with the next period. A ' +
        'new token or customer is used from the next attempt (a dunning retry included).',
      name: 'ChangeSubscriptionRequest',
    },
    inputs.subscriptionChangeInput,
    (id, change) => payments.subscriptions.change(id, change),
  );

  subscriptionChange(
    endpoints.collectSubscription,
    {
      summary: 'Collect owed periods now',
      description:
        'Charges the owed periods named (default: every one owed), oldest first, one at a time, spaced by ' +
        "the subscription's `policy.spacingMs`; each attempt is its own session (`<reference>:p<period>:r<n>`). " +
        'A failed collection leaves the period owed. 409 `nothing_owed`, `period_not_owed`.',
      name: 'CollectOwedRequest',
    },
    inputs.collectInput,
    (id, body) => payments.subscriptions.collect(id, body),
  );

  subscriptionChange(
    endpoints.writeOffSubscription,
    {
      summary: 'Write off owed periods',
      description:
        'The owed periods named (default: every one owed) will never be charged: each is recorded ' +
        'written_off with `reason` (event `subscription.period_written_off`). 409 `nothing_owed`, ' +
        '`period_not_owed`, `period_being_charged` (a collection of it is in flight: wait for its result).',
      name: 'WriteOffOwedRequest',
    },
    inputs.writeOffInput,
    (id, body) => payments.subscriptions.writeOff(id, body),
  );
};
