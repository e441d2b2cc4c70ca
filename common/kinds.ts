/**
 * The names paysaga's contracts are made of, each list written once (`as const`) and every other list,
 * type and check derived from it. Safe for workflow code.
 */

/** What a payment session is for; each kind is one workflow type (workflows/<kind>.ts). */
export const SESSION_KINDS = [
  'card_checkout',
  'payment_form',
  'recurring_payment',
  'fps_payment',
  'fps_binding',
  'payout',
  'identity_check',
] as const;
export type SessionKind = (typeof SESSION_KINDS)[number];

/** The partner's decisions on a session, each an Update of the same name (common/messages.ts). */
export const DECISIONS = ['approve', 'cancel', 'finalize'] as const;
export type Decision = (typeof DECISIONS)[number];

/**
 * Every kind in one table: the workflow type that runs it (workflows/<file>.ts), and the messages that
 * workflow accepts beyond those of every session (the provider's news and the reads):
 * `decisions` (acceptDecisions), `refunds` (acceptRefunds: the payer paid, so money can go back),
 * `starter` (acceptStarter: the creating request sends card data itself) and `payouts` (acceptPayouts).
 * The client names a refused message by it; test/workflows/kind-messages.test.ts holds each workflow's
 * registered handlers (its own `__temporal_workflow_metadata`) to it.
 */
export const KINDS = {
  card_checkout: {
    workflow: 'checkoutWorkflow',
    decisions: ['approve', 'cancel', 'finalize'],
    refunds: true,
    starter: true,
    payouts: false,
  },
  payment_form: {
    workflow: 'checkoutWorkflow',
    decisions: ['approve', 'cancel', 'finalize'],
    refunds: true,
    starter: true,
    payouts: false,
  },
  recurring_payment: {
    workflow: 'checkoutWorkflow',
    decisions: ['approve', 'cancel', 'finalize'],
    refunds: true,
    starter: true,
    payouts: false,
  },
  fps_payment: {
    workflow: 'fpsPaymentWorkflow',
    decisions: ['approve', 'cancel'],
    refunds: true,
    starter: false,
    payouts: false,
  },
  fps_binding: {
    workflow: 'fpsBindingWorkflow',
    decisions: ['approve', 'cancel'],
    refunds: false,
    starter: false,
    payouts: false,
  },
  payout: {
    workflow: 'payoutWorkflow',
    decisions: ['approve', 'cancel'],
    refunds: false,
    starter: true,
    payouts: true,
  },
  identity_check: {
    workflow: 'identityCheckWorkflow',
    decisions: [],
    refunds: false,
    starter: false,
    payouts: false,
  },
} as const satisfies Record<
  SessionKind,
  { workflow: string; decisions: readonly Decision[]; refunds: boolean; starter: boolean; payouts: boolean }
>;

/** The workflow types that run sessions. */
export type SessionWorkflowType = (typeof KINDS)[SessionKind]['workflow'];

/** Kinds where the payer pays the partner: refunds and chargebacks can follow them. */
export const PAYMENT_KINDS: readonly SessionKind[] = SESSION_KINDS.filter((k) => KINDS[k].refunds);

/** Kinds that move money (the reconciler re-reads every one of them). */
export const MONEY_KINDS: readonly SessionKind[] = SESSION_KINDS.filter(
  (k) => KINDS[k].refunds || KINDS[k].payouts,
);

/** The workflow type of a kind (the intake starts it; a later run reopens it). */
export const workflowOf = (k: SessionKind): SessionWorkflowType => KINDS[k].workflow;

export const acceptsDecision = (k: SessionKind, d: Decision): boolean =>
  (KINDS[k].decisions as readonly Decision[]).includes(d);

export const isPaymentKind = (k: SessionKind): boolean => (PAYMENT_KINDS as readonly string[]).includes(k);

/**
 * Where a session is, in paysaga's words. It follows the provider's state; `needs_attention` means paysaga
 * could not learn or act for a while (provider unreachable past every retry, a deadline that could not
 * cancel) and keeps trying. Only the three last ones are final, and a final phase never changes.
 */
export const SESSION_PHASES = [
  'starting',
  'processing',
  'awaiting_approval',
  'awaiting_payer',
  'awaiting_finalization',
  'needs_attention',
  'succeeded',
  'failed',
  'canceled',
] as const;
export type SessionPhase = (typeof SESSION_PHASES)[number];

export const FINAL_PHASES = ['succeeded', 'failed', 'canceled'] as const satisfies readonly SessionPhase[];
export type FinalPhase = (typeof FINAL_PHASES)[number];
export const isFinalPhase = (p: SessionPhase): p is FinalPhase =>
  (FINAL_PHASES as readonly string[]).includes(p);

/** Phases in which the provider waits for the partner (a decision of the session's policy). */
export const DECISION_PHASES = [
  'awaiting_approval',
  'awaiting_finalization',
] as const satisfies readonly SessionPhase[];

/** `ended`: its last period (endAfterPeriods, endAt) was billed; `canceled`: stopped before that. */
export const SUBSCRIPTION_STATUSES = ['active', 'paused', 'past_due', 'canceled', 'ended'] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

/** `PaymentKind` of workflows that are not payment sessions (search excludes them). */
export const SUBSCRIPTION_KIND = 'subscription';

/** Operations of a session as the view lists them. */
export const OPERATION_KINDS = ['payment', 'payout', 'refund', 'chargeback'] as const;
export type OperationKind = (typeof OPERATION_KINDS)[number];

/** A refund the partner asked for, from the request to the provider's result. */
export const REFUND_STATUSES = ['requested', 'processing', 'succeeded', 'failed'] as const;
export type RefundStatus = (typeof REFUND_STATUSES)[number];

/** Where an entry of a session's event log came from. */
export const EVENT_SOURCES = ['webhook', 'poll', 'call', 'decision', 'payer', 'timer', 'partner'] as const;
export type EventSource = (typeof EVENT_SOURCES)[number];

/** The status of one payout of a session, as the partner sees it. */
export const PAYOUT_STATUSES = [
  'queued',
  'starting',
  'awaiting_approval',
  'processing',
  'succeeded',
  'failed',
  'canceled',
] as const;
export type PayoutStatus = (typeof PAYOUT_STATUSES)[number];
