/**
 * The creating routes: checkouts (card, payment form, FPS, recurring), payouts, identity checks and
 * FPS bindings. Each is named by a reference (body) or an Idempotency-Key (header): the same name
 * returns the same session. Input is validated by PaymentsClient with the zod schemas of
 * client/inputs.ts before anything is started.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import * as inputs from '../../client/inputs';
import type { Started } from '../../client/reads';
import type { StartOptions } from '../../client/starter';
import type { SessionView } from '../../common/views';
import { endpoints } from '../../client/http/endpoints';
import { PAYOUT_LIMITS } from '../../common/payouts';
import type { ApiDeps } from '../deps';
import {
  explainMissingReference,
  objectBody,
  parse,
  sendCreated,
  waitMs,
  withReference,
  tableRoute,
} from '../http';
import {
  docSchema,
  errorResponses,
  idempotencyHeader,
  refusalResponses,
  SESSION_REF,
  waitQuery,
} from '../schemas';

/** Long enough for a 3-DS redirect or a QR, short of common proxy timeouts. */
export const DEFAULT_CREATE_WAIT_MS = 5_000;

const METHODS = ['card', 'payment_form', 'fps', 'recurring'] as const;
type Method = (typeof METHODS)[number];
const methodOnly = z.object({ method: z.enum(METHODS) });

const referenceNote = 'Optional when the Idempotency-Key header is sent.';
const checkoutVariants: Record<Method, z.ZodType> = {
  card: inputs.cardCheckoutInput,
  payment_form: inputs.paymentFormInput,
  fps: inputs.fpsPaymentInput,
  recurring: inputs.recurringPaymentInput,
};

/** Each method's body, as the document names it. */
const CHECKOUT_NAMES: Record<Method, string> = {
  card: 'CardCheckoutRequest',
  payment_form: 'PaymentFormCheckoutRequest',
  fps: 'FpsCheckoutRequest',
  recurring: 'RecurringCheckoutRequest',
};

const checkoutBody = {
  description:
    '`method` selects the kind; the other fields are those of the matching PaymentsClient input. ' +
    '`reference` names the request (or send Idempotency-Key). `settings` sets the approval and ' +
    'finalization policy (auto, auto_partial, manual with a deadline) of this session.',
  oneOf: METHODS.map((m) =>
    docSchema(checkoutVariants[m], {
      optional: ['reference'],
      extra: { method: { type: 'string', const: m } },
      description: `method ${m}. ${referenceNote}`,
      name: CHECKOUT_NAMES[m],
    }),
  ).map((s) => ({ ...s, required: ['method', ...((s.required as string[] | undefined) ?? [])] })),
  discriminator: { propertyName: 'method' },
};

const createdResponses = {
  201: { description: 'Created (Location: /v1/sessions/{id}).', ...SESSION_REF },
  200: {
    description:
      'The session an earlier request with the same reference created (Idempotent-Replayed: true).',
    ...SESSION_REF,
  },
  ...refusalResponses,
  ...errorResponses,
};

function routeSchema(summary: string, description: string, body: Record<string, unknown>) {
  return {
    tags: ['sessions'],
    summary,
    description,
    security: [{ bearerAuth: [] }],
    headers: idempotencyHeader,
    querystring: waitQuery(DEFAULT_CREATE_WAIT_MS),
    body,
    response: createdResponses,
  };
}

export const checkoutRoutes: FastifyPluginAsync<ApiDeps> = async (app, deps) => {
  const { payments } = deps;
  const links = { temporal: deps.temporal, temporalUiUrl: deps.temporalUiUrl };

  /** Shared shape of every creating handler: name it, start it, answer 201 or 200. */
  const create =
    (
      start: (
        body: Record<string, unknown>,
        request: FastifyRequest,
        o: StartOptions,
      ) => Promise<Started<SessionView>>,
    ) =>
    async (request: FastifyRequest, reply: FastifyReply) => {
      const body = withReference(request, objectBody(request.body));
      const o = { waitMs: waitMs(request.query, DEFAULT_CREATE_WAIT_MS) };
      const view = await explainMissingReference(body, () => start(body, request, o));
      return sendCreated(reply, view, links);
    };

  tableRoute(
    app,
    endpoints.createCheckout,
    {
      schema: routeSchema(
        'Start a checkout',
        'Card (card data sent to the provider by the API, never through Temporal), payment form ' +
          '(answers with publicToken), FPS (answers with the QR in userAction) or recurring (MIT, or ' +
          'CIT with 3-D Secure). With ?wait the answer carries userAction when there is one.',
        checkoutBody,
      ),
    },
    create((body, _request, o) => {
      const { method } = parse(methodOnly, body);
      const { method: _method, ...input } = body;
      switch (method) {
        case 'card':
          return payments.sessions.startCardCheckout(input as inputs.CardCheckoutInput, o);
        case 'payment_form':
          return payments.sessions.startPaymentForm(input as inputs.PaymentFormInput, o);
        case 'fps':
          return payments.sessions.startFpsPayment(input as inputs.FpsPaymentInput, o);
        case 'recurring':
          return payments.sessions.startRecurringPayment(input as inputs.RecurringPaymentInput, o);
      }
    }),
  );

  tableRoute(
    app,
    endpoints.createPayout,
    {
      schema: routeSchema(
        'Start a payout, or several in one session',
        'One payout: to a card (raw or hashed card data, sent by the API, never through Temporal), a ' +
          'tokenized card, a recurring token or an FPS account. Several (`payouts: [...]`, at most ' +
          `${PAYOUT_LIMITS.perSession}, each with its own reference, to a token or an FPS account): sent ` +
          'one at a time in this order, each with its own approval and result (`payouts` of the session); ' +
          'the session is final once every one is.',
        {
          oneOf: [
            // `payouts` makes it a batch: one payout is a body without it.
            {
              ...docSchema(inputs.payoutInput, {
                optional: ['reference'],
                description: 'One payout.',
                name: 'PayoutRequest',
              }),
              not: { required: ['payouts'] },
            },
            docSchema(inputs.payoutBatchInput, {
              optional: ['reference'],
              description: 'Several payouts in one session. ' + referenceNote,
              name: 'PayoutBatchRequest',
            }),
          ],
        },
      ),
    },
    create((body, _r, o) =>
      'payouts' in body
        ? payments.payouts.startBatch(body as inputs.PayoutBatchInput, o)
        : payments.sessions.startPayout(body as inputs.PayoutInput, o),
    ),
  );

  tableRoute(
    app,
    endpoints.createIdentityCheck,
    {
      schema: routeSchema(
        'Check an FPS recipient',
        'Succeeds when the phone is registered in FPS with the bank, else the session is canceled.',
        docSchema(inputs.identityCheckInput, { optional: ['reference'], name: 'IdentityCheckRequest' }),
      ),
    },
    create((body, _r, o) => payments.identityChecks.start(body as inputs.IdentityCheckInput, o)),
  );

  tableRoute(
    app,
    endpoints.createFpsBinding,
    {
      schema: routeSchema(
        'Bind an FPS account for recurring payments',
        'Nothing is charged; the recurring token arrives with the result (recurringToken).',
        docSchema(inputs.fpsBindingInput, { optional: ['reference'], name: 'FpsBindingRequest' }),
      ),
    },
    create((body, _r, o) => payments.sessions.startFpsBinding(body as inputs.FpsBindingInput, o)),
  );
};
