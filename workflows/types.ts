/**
 * Plain data that crosses into Temporal: workflow inputs, results and the session view.
 * Nothing here may ever hold card data (DESIGN decision 2).
 */
import type { IdentityCheckRequest, SessionInfo, UserAction } from '../provider/schemas';

export type SessionKind =
  | 'card_checkout'
  | 'payment_form'
  | 'recurring_payment'
  | 'fps_payment'
  | 'fps_binding'
  | 'payout'
  | 'identity_check'
  | 'refund'
  | 'late_event';

export interface Money {
  /** Minor units. */
  amount: number;
  /** Lower-case ISO 4217 code. */
  currency: string;
}

export type ApprovalPolicy = { mode: 'auto' } | { mode: 'manual'; deadlineMs: number };

export type FinalizationPolicy =
  { mode: 'auto' } | { mode: 'auto_partial'; amount: number } | { mode: 'manual'; deadlineMs: number };

/** When webhooks are on, polling starts only once an expected event is `lateAfterMs` late. */
export interface PollingPolicy {
  webhooks: boolean;
  lateAfterMs: number;
  initialMs: number;
  maxMs: number;
  factor: number;
}

export interface Deadlines {
  /** How long the payer has for 3-D Secure / the bank app. */
  payerActionMs: number;
  /** How long the whole session may take before what can be canceled is canceled. */
  sessionMs: number;
  /** For starter-submitted card data: how long to wait for the starter to send it. */
  startMs: number;
}

export interface SessionSettings {
  approval: ApprovalPolicy;
  finalization: FinalizationPolicy;
  polling: PollingPolicy;
  deadlines: Deadlines;
}

/** How the operation gets started at the provider. */
export type StartSpec =
  /** The workflow sends start/checkout or start/transfer itself (no card data in the body). */
  | { by: 'workflow'; operation: 'checkout' | 'transfer'; body: Record<string, unknown> }
  /** The starter sent card data itself, outside Temporal; the workflow waits for the session to move. */
  | { by: 'starter' }
  /** The payer uses the payment-form widget with a public token the workflow creates. */
  | { by: 'widget'; widget: { lang?: string; showAutopayOption?: boolean } }
  /** The provider call that created the session also started it (identity check). */
  | { by: 'provider' };

export interface SessionInput {
  sessionId: string;
  kind: SessionKind;
  reference: string;
  money?: Money;
  start: StartSpec;
  settings: SessionSettings;
  /** FPS: how many times an expired QR is replaced by a new payment before giving up. */
  qrRenewals?: number;
  /** The session as the starter last saw it (initiate's answer), with no card data in it. */
  initialSnapshot?: SessionInfo;
}

/** The intake of an identity check: one per caller reference (workflow id `identity-check-<reference>`). */
export interface IdentityCheckIntakeInput {
  reference: string;
  /** The sbp/identity_check body: a phone, a bank, the payee. */
  request: IdentityCheckRequest;
  /** A digest of `request`: tells a repeat from another check under the same reference. */
  fingerprint: string;
  settings: SessionSettings;
}

/** The session made for the reference, or the provider's final refusal (repeats get the same). */
export type IdentityCheckIntakeResult = { fingerprint: string } & (
  | { sessionId: string }
  | { refused: { endpoint: string; errorCode: string; description: string; httpStatus?: number } }
);

export interface RefundInput {
  sessionId: string;
  /** The caller's reference of this refund: the idempotency key is derived from it. */
  refundReference: string;
  /** Omitted: the whole payment. */
  amount?: number;
  currency?: string;
  settings: SessionSettings;
}

export interface LateEventInput {
  sessionId: string;
}

/** Where the session is, in paysaga's words. */
export type SessionPhase =
  | 'starting'
  | 'processing'
  | 'awaiting_approval'
  | 'awaiting_payer'
  | 'awaiting_finalization'
  | 'succeeded'
  | 'failed'
  | 'canceled';

export const FINAL_PHASES: readonly SessionPhase[] = ['succeeded', 'failed', 'canceled'];

export interface SessionEvent {
  at: string;
  source: 'webhook' | 'poll' | 'call' | 'decision' | 'payer' | 'timer';
  type: string;
  detail?: string;
}

export interface OperationView {
  id: string;
  kind: 'payment' | 'payout' | 'refund' | 'chargeback';
  status: string;
  amount?: number;
  currency?: string;
  /** The provider's commission on this operation (fee_info), minor units of `currency`, when it reports one. */
  fee?: number;
  error?: string;
}

export interface SessionView {
  sessionId: string;
  kind: SessionKind;
  reference: string;
  phase: SessionPhase;
  providerStatus?: string;
  money?: Money;
  operations: OperationView[];
  userAction?: UserAction;
  publicToken?: string;
  recurringToken?: string;
  /** Why the session ended other than successfully, or what stopped it. */
  reason?: string;
  lastSnapshot?: SessionInfo;
  events: SessionEvent[];
}

export type SessionResult = SessionView;

/** The webhooks-off reconciler (workflows/reconciler.ts). */
export interface ReconcilerInput {
  everyMs: number;
  windowMs: number;
  /** Sessions read per round at most. */
  maxPerRound: number;
  /** Rounds before continue-as-new (bounds history). */
  roundsPerRun?: number;
}

export interface ReconcilerState {
  rounds: number;
  synced: number;
  lateEvents: number;
  /** Sessions the provider refused this time (tried again next round). */
  failed: number;
  lastRoundAt?: string;
}
