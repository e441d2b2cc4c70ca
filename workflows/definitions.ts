/**
 * Signals, updates and queries of session workflows, defined once and imported by both the
 * workflows and their callers (starter, API, webhook router).
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { WebhookEvent } from '../provider/schemas';
import type { SubscriptionChange, SubscriptionView } from './subscription-types';
import type { ReconcilerState, SessionView } from './types';

/** A verified provider webhook for this session. */
export const providerEventSignal = defineSignal<[WebhookEvent]>('providerEvent');
/** The event type of the starter's own start/checkout or start/transfer answer, sent by providerEvent. */
export const START_RESPONSE = 'start_response';
/** The starter could not submit the card data (the provider refused it): end the session with this reason. */
export const startFailedSignal = defineSignal<[{ reason: string }]>('startFailed');
/** The payer came back to back_url: check the state now. */
export const payerReturnedSignal = defineSignal<[]>('payerReturned');

export const sessionQuery = defineQuery<SessionView>('session');

export const approveUpdate = defineUpdate<SessionView, []>('approve');
export const cancelUpdate = defineUpdate<SessionView, [{ reason?: string }]>('cancel');
/** Amount in minor units; omitted = the whole held amount. Callers pass {} for none. */
export const finalizeUpdate = defineUpdate<SessionView, [{ amount?: number }]>('finalize');
/** Returns once the payer's action (3-DS, QR) or a final result is known, or after `timeoutMs`. */
export const awaitProgressUpdate = defineUpdate<SessionView, [{ timeoutMs: number }]>('awaitProgress');

// Recurring billing (workflows/subscription.ts): its own names, so that a subscription's cancel can
// never be mistaken for a session's cancel. Each answers the subscription after the change.
export const subscriptionQuery = defineQuery<SubscriptionView>('subscription');
export const cancelSubscriptionUpdate = defineUpdate<SubscriptionView, [{ reason?: string }]>(
  'cancelSubscription',
);
export const pauseSubscriptionUpdate = defineUpdate<SubscriptionView, []>('pauseSubscription');
export const resumeSubscriptionUpdate = defineUpdate<SubscriptionView, []>('resumeSubscription');
/** Applies from the next period: a charge already started keeps its amount. */
export const changeSubscriptionUpdate = defineUpdate<SubscriptionView, [SubscriptionChange]>(
  'changeSubscription',
);

/** What the webhooks-off reconciler has done so far. */
export const reconcilerQuery = defineQuery<ReconcilerState>('reconciler');
