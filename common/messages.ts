/**
 * Every signal, update and query of paysaga's workflows, defined once and imported by the workflows
 * that accept them and by their callers (starter, API, webhook router). Each workflow file registers
 * exactly the ones it accepts. Safe for workflow code.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { SessionInfo } from '../provider/schemas';
import type { ProviderRefusal } from './failures';
import type { EndReason } from './reasons';
import type { ProviderEventRecord, SessionView, SubscriptionView } from './views';
import type { ProrationPolicy } from './billing-policy';
import type { ScheduleRequest } from './subscription-input';
import type { ProviderEventDelivery, TransferStart } from './session-input';

/**
 * What a query answers when it reached the worker before the workflow task its news asked for
 * (workflows/query-guard.ts): nothing is wrong, and asking again answers.
 */
export const QUERY_CAME_WITH_NEWS =
  'news for this workflow arrived with the query: the worker takes it in its workflow task; ask again';

// ---- a payment session (workflow id = session id) ----

export const providerEventSignal = defineSignal<[ProviderEventDelivery]>('providerEvent');

/** The payer came back to back_url: check the state now (at most once per interval). */
export const payerReturnedSignal = defineSignal<[]>('payerReturned');

export const sessionQuery = defineQuery<SessionView>('session');
/** The webhook audit trail: every provider event the session received, newest last. */
export const providerEventsQuery = defineQuery<ProviderEventRecord[]>('providerEvents');
/** The recorded provider events with their payloads, for `paysaga webhooks replay`. */
export const recordedProviderEventsQuery = defineQuery<ProviderEventDelivery[]>('recordedProviderEvents');

/**
 * Card data is sent by the starter, never through Temporal
 * (docs/decisions/002-card-data-never-enters-temporal.md). Before sending it, the starter claims the start:
 * refused once the session has moved on or given up waiting, so card data is never sent to a session paysaga
 * has already reported.
 */
export const claimStartUpdate = defineUpdate<SessionView, []>('claimStart');
/**
 * The provider's answer to the starter's start call, or its refusal. A signal: the starter then waits for
 * the session's record like any reader (client/reads.ts).
 */
export type StartReport = { snapshot: SessionInfo } | { refused: ProviderRefusal };
export const reportStartSignal = defineSignal<[StartReport]>('reportStart');

/**
 * `payout`: the reference of the payout the decision is for (a session of several payouts): refused
 * unless that payout is the one waiting, so a decision meant for one payout never lands on the next.
 */
export interface ApproveRequest {
  payout?: string;
}
export const approveUpdate = defineUpdate<SessionView, [ApproveRequest]>('approve');
export const cancelUpdate = defineUpdate<SessionView, [{ reason?: string; payout?: string }]>('cancel');
/** Amount in minor units; omitted = the whole held amount. */
export const finalizeUpdate = defineUpdate<SessionView, [{ amount?: number }]>('finalize');
/**
 * A refund of a successful payment; the same reference is the same refund. Amount omitted: what is left.
 * Answers once the provider has taken it (or refused it), with whether this request created it.
 */
export interface RefundResult {
  session: SessionView;
  created: boolean;
}
export interface RefundRequest {
  reference: string;
  amount?: number;
  /** Sent as the refund's extra_info (REFUND_EXTRA_INFO_BOUNDS). */
  extraInfo?: unknown;
}
export const refundUpdate = defineUpdate<RefundResult, [RefundRequest]>('refund');

/**
 * Another payout in a payout session (common/payouts.ts): queued and sent once the payouts before it have
 * ended. The same reference is the same payout; answers at once with whether this request added it.
 */
export interface PayoutRequest {
  reference: string;
  money: { amount: number; currency: string };
  /** start/transfer without session_id: a token or an FPS account (never card data), with sum_info. */
  body: TransferStart;
}
export interface PayoutResult {
  session: SessionView;
  created: boolean;
}
export const addPayoutUpdate = defineUpdate<PayoutResult, [PayoutRequest]>('addPayout');

/** A session tells the workflow that asked for it (a subscription's charge) that its result is known. */
export interface SessionSettled {
  sessionId: string;
  phase: SessionView['phase'];
  reason?: EndReason;
}
export const sessionSettledSignal = defineSignal<[SessionSettled]>('sessionSettled');

// ---- recurring billing (workflow id `sub-<reference>`): its own names, never mistaken for a session's ----

export const subscriptionQuery = defineQuery<SubscriptionView>('subscription');
/** `atPeriodEnd`: no charge after the period paid for, then canceled; else at once. */
export interface CancelSubscriptionRequest {
  reason?: string;
  atPeriodEnd?: boolean;
}
export const cancelSubscriptionUpdate = defineUpdate<SubscriptionView, [CancelSubscriptionRequest]>(
  'cancelSubscription',
);
/** `resumeAt` (epoch ms): resumes on its own then. */
export const pauseSubscriptionUpdate = defineUpdate<SubscriptionView, [{ resumeAt?: number }]>(
  'pauseSubscription',
);
/** `restart`: bill from now on (a new anchor) instead of keeping the billing day. */
export const resumeSubscriptionUpdate = defineUpdate<SubscriptionView, [{ restart?: boolean }]>(
  'resumeSubscription',
);
/**
 * Amount and schedule apply from `fromPeriod` (default: the next period to fall due; one already taken
 * keeps its amount), prorated per `proration` (default: the subscription's policy); a token and the
 * payer's details from the next attempt.
 */
export interface SubscriptionChange {
  amount?: number;
  token?: string;
  customer?: Record<string, unknown>;
  schedule?: ScheduleRequest;
  fromPeriod?: number;
  proration?: ProrationPolicy;
}
export const changeSubscriptionUpdate = defineUpdate<SubscriptionView, [SubscriptionChange]>(
  'changeSubscription',
);
/** Owed periods to charge now, one at a time (default: every one owed). */
export const collectOwedUpdate = defineUpdate<SubscriptionView, [{ periods?: number[] }]>('collectOwed');
/** Owed periods nobody will collect (default: every one owed), with the partner's words. */
export const writeOffOwedUpdate = defineUpdate<SubscriptionView, [{ periods?: number[]; reason?: string }]>(
  'writeOffOwed',
);
