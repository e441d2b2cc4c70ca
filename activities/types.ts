/**
 * What workflows may ask of the outside world. Workflows import this file as types only. No argument
 * or result here carries card data. Money-moving calls take the step their idempotency key is derived
 * from, and `verifyFirst`: read transaction/state before sending, and send only if it shows the step has
 * not taken effect (a resend after a restart, a continue-as-new, or a key older than the provider keeps).
 */
import type { Money } from '../common/views';
import type { SessionSettings } from '../common/settings';
import type { InitCheckoutRequest, SessionInfo } from '../provider/schemas';
import type { CheckoutStart, TransferStart } from '../common/session-input';
import type { WebhookEvent } from '../provider/schemas';
import type { WebhookRejectionReason } from '../provider/webhook-verifier';

/** Every call is about one session, and carries that session's sub-merchant when it has one. */
export interface SessionCall {
  sessionId: string;
  submerchantId?: string;
  /** The provider project the session belongs to (absent: the default project). */
  projectId?: string;
}

export interface MoneyMovingCall extends SessionCall {
  verifyFirst: boolean;
}

export interface ProviderActivities {
  /** start/checkout with a body that holds no card data; `n` > 0 renews an FPS payment (key `start:n`). */
  startCheckout(a: MoneyMovingCall & { body: CheckoutStart; n: number }): Promise<SessionInfo>;
  /** start/transfer with a body that holds no card data (key `start`). */
  startTransfer(a: MoneyMovingCall & { body: TransferStart }): Promise<SessionInfo>;
  /**
   * start/transfer of one of several payouts of a session (key `payout:<reference>`). `knownPayoutIds`:
   * the payouts that existed before this one was first sent, so that the state can tell whether it did.
   */
  startPayout(
    a: MoneyMovingCall & { body: TransferStart; reference: string; knownPayoutIds: string[] },
  ): Promise<SessionInfo>;
  /** transaction/approve of the operation waiting for it (key `approve:<operation>`). */
  approve(a: MoneyMovingCall & { operationId: string }): Promise<SessionInfo>;
  /** transaction/cancel of the operation waiting for a decision (key `cancel:<operation>`). */
  cancel(a: MoneyMovingCall & { operationId: string }): Promise<SessionInfo>;
  /** transaction/finalize of a held payment, in full or `amount` of it (key `finalize:<operation>`). */
  finalize(a: MoneyMovingCall & { operationId: string; amount?: Money }): Promise<SessionInfo>;
  /**
   * transaction/refund (key `refund:<reference>`). `knownRefundIds`: the refund records that existed
   * before this refund was first sent, so that the state can tell whether it took effect.
   */
  refund(
    a: MoneyMovingCall & { reference: string; amount: Money; knownRefundIds: string[]; extraInfo?: unknown },
  ): Promise<SessionInfo>;
  /** transaction/state: the truth. */
  getState(a: SessionCall): Promise<SessionInfo>;
  /** public_token with payment_form_config for this session. */
  createPaymentFormToken(
    a: SessionCall & { widget: { lang?: string; showAutopayOption?: boolean } },
  ): Promise<string>;
  /** public_token with fps_widget for this session: the provider's FPS page starts its payment. */
  createFpsWidgetToken(a: SessionCall & { widget: { lang?: string } }): Promise<string>;
}

/** What a subscription's charge is opened with (workers/charge-activities.ts). */
export interface ChargeOpening {
  subscriptionId: string;
  period: number;
  attempt: number;
  /** The charge's own reference (`<subscription reference>:p<period>[:r<attempt>]`). */
  reference: string;
  money: Money;
  /** transaction/init/checkout by the subscription's recurring token (no card data). */
  body: InitCheckoutRequest;
  settings?: SessionSettings;
  submerchantId?: string;
  projectId?: string;
  customerId?: string;
}

export interface ChargeActivities {
  /**
   * Opens the charge's provider session and payment under its reference, once, and starts its session
   * workflow; asked again, answers the same session.
   */
  openCharge(c: ChargeOpening): Promise<{ sessionId: string }>;
}

/** A webhook verified again in the worker: the event (card fields removed), or why it is refused. */
export type ProviderEventProof =
  { ok: true; event: WebhookEvent } | { ok: false; reason: WebhookRejectionReason; detail: string };

export interface ProofActivities {
  /**
   * Verifies a webhook body against its X-Signature with the provider's service keys the worker holds
   * now and parses it (docs/decisions/016-results-are-proven.md).
   */
  verifyProviderEvent(a: { body: string; signature: string }): Promise<ProviderEventProof>;
}
