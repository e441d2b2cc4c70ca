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

/** Kinds where the payer pays the partner: refunds and chargebacks can follow them. */
export const PAYMENT_KINDS = [
  'card_checkout',
  'payment_form',
  'recurring_payment',
  'fps_payment',
] as const satisfies readonly SessionKind[];

/** Kinds that move money (the reconciler re-reads every one of them). */
export const MONEY_KINDS = [...PAYMENT_KINDS, 'payout'] as const satisfies readonly SessionKind[];

/** The workflow type that runs a session of each kind (workflows/session-workflows.ts has the functions). */
export const SESSION_WORKFLOW_TYPES = {
  card_checkout: 'checkoutWorkflow',
  payment_form: 'checkoutWorkflow',
  recurring_payment: 'checkoutWorkflow',
  fps_payment: 'fpsPaymentWorkflow',
  fps_binding: 'fpsBindingWorkflow',
  payout: 'payoutWorkflow',
  identity_check: 'identityCheckWorkflow',
} as const satisfies Record<SessionKind, string>;

/** The partner's decisions on a session, each an Update of the same name (common/messages.ts). */
export const DECISIONS = ['approve', 'cancel', 'finalize'] as const;
export type Decision = (typeof DECISIONS)[number];

/**
 * The decisions each kind's workflow registers (`acceptDecisions` in workflows/<kind>.ts; the unit test
 * test/unit/session-messages.test.ts holds the two together). The client names a refused one by it.
 */
export const KIND_DECISIONS = {
  card_checkout: ['approve', 'cancel', 'finalize'],
  payment_form: ['approve', 'cancel', 'finalize'],
  recurring_payment: ['approve', 'cancel', 'finalize'],
  fps_payment: ['approve', 'cancel'],
  fps_binding: ['approve', 'cancel'],
  payout: ['approve', 'cancel'],
  identity_check: [],
} as const satisfies Record<SessionKind, readonly Decision[]>;

export const acceptsDecision = (k: SessionKind, d: Decision): boolean =>
  (KIND_DECISIONS[k] as readonly Decision[]).includes(d);

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
