/**
 * What workflows may ask of the outside world. Workflows import this file as types only.
 * No argument or result here carries card data.
 */
import type { IdentityCheckRequest, SessionInfo } from '../provider/schemas';
import type { Money } from '../workflows/types';

export type Decision = 'approve' | 'cancel' | 'finalize';

export interface SessionActivities {
  /** start/checkout or start/transfer with a body that holds no card data; key from (session, step). */
  startOperation(
    sessionId: string,
    operation: 'checkout' | 'transfer',
    body: Record<string, unknown>,
    step: string,
  ): Promise<SessionInfo>;
  /** approve / cancel / finalize (amount: partial finalize), key from (session, step). */
  decide(sessionId: string, decision: Decision, step: string, amount?: Money): Promise<SessionInfo>;
  /** transaction/refund, key from (session, step); amount omitted = full. */
  refund(sessionId: string, step: string, amount?: Money): Promise<SessionInfo>;
  /**
   * sbp/identity_check (phone, bank, payee; no card data). The provider takes no idempotency key
   * here, so a retry after an unknown outcome may make a second, unused check (never charged).
   */
  requestIdentityCheck(body: IdentityCheckRequest): Promise<SessionInfo>;
  /** transaction/state: the truth. */
  getState(sessionId: string): Promise<SessionInfo>;
  /** public_token with payment_form_config for this session. */
  createPaymentFormToken(
    sessionId: string,
    widget: { lang?: string; showAutopayOption?: boolean },
  ): Promise<string>;
}

/** Recurring billing: the provider session of one charge attempt of one subscription period. */
export interface SubscriptionActivities {
  /**
   * transaction/initiate for (subscription, period, attempt), key from (subscription id,
   * `period:N:attempt:M`): a retried or replayed call answers with the same session, never a second one.
   */
  initiateRecurringSession(
    subscriptionId: string,
    period: number,
    attempt: number,
    body: Record<string, unknown>,
  ): Promise<SessionInfo>;
}
