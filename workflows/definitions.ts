/**
 * Signals, updates and queries of session workflows, defined once and imported by both the
 * workflows and their callers (starter, API, webhook router).
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { WebhookEvent } from '../provider/schemas';
import type { SessionView } from './types';

/** A verified provider webhook for this session. */
export const providerEventSignal = defineSignal<[WebhookEvent]>('providerEvent');
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
