/**
 * The partner routes of the paysaga HTTP API (`api/routes/*.ts`, `api/README.md`) as data: method,
 * path template, whether the route creates (named by a reference: Idempotency-Key applies, 201 or a
 * replayed 200) and takes `?wait=`, and the types of its input and answer. PaysagaApiClient sends
 * every one of them through one request path. Types only: the inputs are the zod input types of
 * `client/inputs.ts` and the answers the views of `workflows/`, nothing of them is loaded at runtime.
 */
import type { z } from 'zod';
import type { RequestOf, ResponseOf } from '../../provider/schemas/endpoints';
import type { EventType, PaysagaEvent } from '../../common/events';
import type * as ev from '../../common/event-views';
import type {
  linksView,
  PeriodPage,
  ProviderEventRecord,
  ReconciliationReport,
  SessionSummary,
  SessionView,
  SubscriptionSummary,
  SubscriptionView,
} from '../../common/views';
import type * as inputs from '../inputs';
import type * as subscriptionInputs from '../subscription-inputs';
import type { SearchPage } from '../search';
import type { ReplayReport } from '../webhook-replay';

export type { ReplayedEvent, ReplayReport } from '../webhook-replay';
export type { ReconciliationReport } from '../../common/views';
export type {
  DeliveryAttempt as EventDeliveryAttempt,
  EventDeliveries,
  EventEndpoint,
  EventEndpointWithSecret,
  EventList,
  RedeliveryAccepted,
} from '../../common/event-views';

export type { SessionSearch, SubscriptionSearch } from '../search';

/** `links` of every Session and Subscription the API answers with. */
export type Links = z.infer<typeof linksView>;

/** A payment session (`SessionView` of `common/views.ts`) with links. */
export type Session = SessionView & { links: Links };
/** A subscription (`SubscriptionView` of `common/views.ts`) with links. */
export type Subscription = SubscriptionView & { links: Links };

/** A page of `GET /v1/sessions`: summaries read from search attributes, with links. */
export interface SessionList extends SearchPage {
  sessions: (SessionSummary & { links: Links })[];
}
/** A page of `GET /v1/subscriptions`. */
export interface SubscriptionList extends SearchPage {
  subscriptions: (SubscriptionSummary & { links: Links })[];
}

/**
 * A creating route's input: `reference` names it; without one, the client names the call with a
 * generated Idempotency-Key (`lastResponse.idempotencyKey`), which then becomes the reference.
 */
export type Named<T> = Omit<T, 'reference'> & { reference?: string };

export type CheckoutInput =
  | ({ method: 'card' } & Named<inputs.CardCheckoutInput>)
  | ({ method: 'payment_form' } & Named<inputs.PaymentFormInput>)
  | ({ method: 'fps' } & Named<inputs.FpsPaymentInput>)
  | ({ method: 'recurring' } & Named<inputs.RecurringPaymentInput>);
/** One payout, or several in one session (`payouts: [...]`, each with its own reference). */
export type PayoutInput = Named<inputs.PayoutInput> | Named<inputs.PayoutBatchInput>;
/** A payout added to a payout session that has not ended. */
export type SessionPayoutInput = Named<inputs.SessionPayoutInput>;
export type IdentityCheckInput = Named<inputs.IdentityCheckInput>;
export type FpsBindingInput = Named<inputs.FpsBindingInput>;
export type RefundInput = Named<inputs.RefundRequestInput>;
export type SubscriptionInput = Named<subscriptionInputs.SubscriptionStartInput>;
export type SubscriptionChangeInput = subscriptionInputs.SubscriptionChangeInput;
/** Body of a subscription's cancel: `atPeriodEnd` cancels once the period paid for ends. */
export type CancelInput = subscriptionInputs.SubscriptionCancelInput;
/** Body of a subscription's pause: `resumeAt` (ISO 8601) resumes it on its own then. */
export type PauseInput = subscriptionInputs.SubscriptionPauseInput;
/** Owed periods to collect or write off (default: every one owed). */
export type CollectInput = subscriptionInputs.CollectInput;
export type WriteOffInput = subscriptionInputs.WriteOffInput;
/** A page of `GET /v1/subscriptions/{id}/periods`: each period with its charge attempts. */
export type PeriodList = PeriodPage;
/** A session's decisions may name the payout they are for (a session of several payouts). */
export interface ApproveInput {
  payout?: string;
}
/** Body of a session's cancel. */
export type SessionCancelInput = { reason?: string } & ApproveInput;
export type ResumeInput = subscriptionInputs.SubscriptionResumeInput;
export interface FinalizeInput {
  /** Minor units, at most the held amount; omitted: the whole hold. */
  amount?: number;
}

/** The provider's answer without its envelope `status` (the pass-through routes). */
type WithoutStatus<T> = { [K in keyof T as K extends 'status' ? never : K]: T[K] };
export type PublicTokenInput = RequestOf<'publicToken'>;
export type PublicToken = WithoutStatus<ResponseOf<'publicToken'>>;
export type Banks = WithoutStatus<ResponseOf<'sbpBanks'>>;
export type TokenInfoInput = RequestOf<'publicTokenState'>;
export type TokenInfo = WithoutStatus<ResponseOf<'publicTokenState'>>;
export interface RecurringTokenDisableInput {
  token: string;
}
export type RecurringTokenDisabled = WithoutStatus<ResponseOf<'recurringTokenDisable'>>;

export interface EventEndpointInput {
  url: string;
  /** Omitted: every event type. */
  events?: EventType[];
  description?: string;
}
export interface RotateSecretInput {
  /** How long the replaced secret still signs (default 24 h). */
  graceMs?: number;
}
export interface EventListQuery {
  session_id?: string;
  subscription_id?: string;
  type?: EventType;
  /** An event id (what follows it) or an ISO time (events created after it). */
  after?: string;
  /** The page after this event id (Stripe's cursor; one of after, starting_after, ending_before). */
  starting_after?: string;
  /** The page before this event id. */
  ending_before?: string;
  limit?: number;
}
export interface RedeliverInput {
  endpointId?: string;
}

export interface IdParams {
  id: string;
}
export type NoParams = Record<string, never>;

declare const types: unique symbol;

export interface Route<Params, Body, Out> {
  method: 'GET' | 'POST' | 'DELETE';
  /** `{name}` is filled from the params, URL-encoded. */
  path: string;
  /** Named by a reference: the Idempotency-Key header applies, and a repeat answers the same thing. */
  creates: boolean;
  /** Takes `?wait=<ms>` (early return). */
  wait: boolean;
  /** Changes nothing (a POST that only reads): safe to send again after no answer. */
  readOnly?: boolean;
  /**
   * What a token must be allowed to do (api/api-tokens.ts): `read` for reads, `payments` for what
   * moves money or decides, `admin` for event endpoints, reconciliation, replay and redelivery.
   */
  scope: 'read' | 'payments' | 'admin';
  /** Carries the types only; never set. */
  readonly [types]?: { params: Params; body: Body; out: Out };
}

const route = <Params, Body, Out>(r: Omit<Route<Params, Body, Out>, typeof types>) =>
  r as Route<Params, Body, Out>;
type Scope = Route<unknown, unknown, unknown>['scope'];
const creating = <Params, Body, Out>(path: string, wait = true) =>
  route<Params, Body, Out>({ method: 'POST', path, creates: true, wait, scope: 'payments' });
const get = <Params, Out>(path: string, scope: Scope = 'read') =>
  route<Params, void, Out>({ method: 'GET', path, creates: false, wait: false, scope });
const post = <Params, Body, Out>(path: string, scope: Scope, readOnly = false) =>
  route<Params, Body, Out>({ method: 'POST', path, creates: false, wait: false, readOnly, scope });
const del = <Params, Out>(path: string, scope: Scope) =>
  route<Params, void, Out>({ method: 'DELETE', path, creates: false, wait: false, scope });

export const endpoints = {
  createCheckout: creating<NoParams, CheckoutInput, Session>('/v1/checkouts'),
  createPayout: creating<NoParams, PayoutInput, Session>('/v1/payouts'),
  createIdentityCheck: creating<NoParams, IdentityCheckInput, Session>('/v1/identity-checks'),
  createFpsBinding: creating<NoParams, FpsBindingInput, Session>('/v1/fps-bindings'),

  listSessions: get<NoParams, SessionList>('/v1/sessions'),
  getSession: get<IdParams, Session>('/v1/sessions/{id}'),
  listProviderEvents: get<IdParams, { events: ProviderEventRecord[] }>('/v1/sessions/{id}/provider-events'),
  replayProviderEvents: post<IdParams, void, ReplayReport>(
    '/v1/sessions/{id}/provider-events/replay',
    'admin',
  ),
  approveSession: post<IdParams, ApproveInput, Session>('/v1/sessions/{id}/approve', 'payments'),
  cancelSession: post<IdParams, SessionCancelInput, Session>('/v1/sessions/{id}/cancel', 'payments'),
  finalizeSession: post<IdParams, FinalizeInput, Session>('/v1/sessions/{id}/finalize', 'payments'),
  createRefund: creating<IdParams, RefundInput, Session>('/v1/sessions/{id}/refunds'),
  addPayout: creating<IdParams, SessionPayoutInput, Session>('/v1/sessions/{id}/payouts', false),

  createSubscription: creating<NoParams, SubscriptionInput, Subscription>('/v1/subscriptions', false),
  listSubscriptions: get<NoParams, SubscriptionList>('/v1/subscriptions'),
  getSubscription: get<IdParams, Subscription>('/v1/subscriptions/{id}'),
  pauseSubscription: post<IdParams, PauseInput, Subscription>('/v1/subscriptions/{id}/pause', 'payments'),
  resumeSubscription: post<IdParams, ResumeInput, Subscription>('/v1/subscriptions/{id}/resume', 'payments'),
  cancelSubscription: post<IdParams, CancelInput, Subscription>('/v1/subscriptions/{id}/cancel', 'payments'),
  changeSubscription: post<IdParams, SubscriptionChangeInput, Subscription>(
    '/v1/subscriptions/{id}/change',
    'payments',
  ),
  listSubscriptionPeriods: get<IdParams, PeriodList>('/v1/subscriptions/{id}/periods'),
  collectSubscription: post<IdParams, CollectInput, Subscription>(
    '/v1/subscriptions/{id}/collect',
    'payments',
  ),
  writeOffSubscription: post<IdParams, WriteOffInput, Subscription>(
    '/v1/subscriptions/{id}/write-off',
    'payments',
  ),

  getReconciliation: get<NoParams, ReconciliationReport>('/v1/reconciliation', 'admin'),

  createPublicToken: post<NoParams, PublicTokenInput, PublicToken>('/v1/public-tokens', 'payments'),
  listBanks: get<NoParams, Banks>('/v1/banks'),
  getTokenInfo: post<NoParams, TokenInfoInput, TokenInfo>('/v1/token-info', 'read', true),
  disableRecurringToken: post<NoParams, RecurringTokenDisableInput, RecurringTokenDisabled>(
    '/v1/recurring-tokens/disable',
    'payments',
  ),

  createEventEndpoint: post<NoParams, EventEndpointInput, ev.EventEndpointWithSecret>(
    '/v1/event-endpoints',
    'admin',
  ),
  listEventEndpoints: get<NoParams, { endpoints: ev.EventEndpoint[] }>('/v1/event-endpoints', 'admin'),
  getEventEndpoint: get<IdParams, ev.EventEndpoint>('/v1/event-endpoints/{id}', 'admin'),
  deleteEventEndpoint: del<IdParams, ev.EventEndpoint & { deleted: true }>(
    '/v1/event-endpoints/{id}',
    'admin',
  ),
  rotateEventEndpointSecret: post<IdParams, RotateSecretInput, ev.EventEndpointWithSecret>(
    '/v1/event-endpoints/{id}/rotate-secret',
    'admin',
  ),
  listEvents: get<NoParams, ev.EventList>('/v1/events'),
  getEvent: get<IdParams, PaysagaEvent>('/v1/events/{id}'),
  getEventDeliveries: get<IdParams, ev.EventDeliveries>('/v1/events/{id}/deliveries'),
  redeliverEvent: post<IdParams, RedeliverInput, ev.RedeliveryAccepted>('/v1/events/{id}/redeliver', 'admin'),
} as const;

export type EndpointName = keyof typeof endpoints;
