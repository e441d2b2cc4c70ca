/**
 * What paysaga answers about its resources: the session and the subscription as their workflows know
 * them. Defined once, in zod: the TypeScript types are inferred from these schemas, and the API's OpenAPI
 * document is generated from them. Workflows import the types only (`import type`).
 */
import { z } from 'zod';
import { BILLING_INTERVALS } from './billing-calendar';
import { APPROVAL_MODES, FINALIZATION_MODES } from './settings';
import { sessionInfo, userAction } from '../provider/schemas/session';
import {
  EVENT_SOURCES,
  OPERATION_KINDS,
  PAYOUT_STATUSES,
  REFUND_STATUSES,
  SESSION_KINDS,
  SESSION_PHASES,
  SUBSCRIPTION_STATUSES,
} from './kinds';
import { ATTENTION_CODES, END_REASON_CODES } from './reasons';

const isoTime = z.string().describe('ISO 8601 time');
const minor = z.number().int().describe('minor units');

export const moneyView = z.object({ amount: minor, currency: z.string().describe('lower-case ISO 4217') });
export type Money = z.infer<typeof moneyView>;

/** The fields a reason has besides its code (common/reasons.ts). */
const reasonFields = {
  detail: z.string().optional().describe('Words for people: never a thing to match'),
  providerCode: z
    .string()
    .optional()
    .describe("The provider's error_code, where the provider's error is the cause"),
  subject: z
    .string()
    .optional()
    .describe("What it is about: the provider call, the refund's reference, the charge's session"),
};

export const endReasonView = z
  .object({ code: z.enum(END_REASON_CODES).describe('What ended it: one of a closed list'), ...reasonFields })
  .meta({ title: 'EndReason' })
  .describe('Why it ended other than successfully');

export const sessionEventView = z.object({
  at: isoTime,
  source: z.enum(EVENT_SOURCES),
  type: z.string(),
  detail: z.string().optional(),
});
export type SessionEvent = z.infer<typeof sessionEventView>;

export const operationView = z.object({
  id: z.string().describe("The provider's id: pm_, po_ or rf_..."),
  kind: z.enum(OPERATION_KINDS),
  status: z.string().describe("The provider's transaction_status"),
  amount: minor.optional(),
  currency: z.string().optional(),
  /** Of a held payment: what the partner finalized (the rest was released). */
  captured: minor.optional().describe('held payments: the amount charged at finalize'),
  fee: minor.optional().describe("The provider's commission (fee_info), when it reports one"),
  error: z.string().optional().describe("The provider's error_code"),
});
export type OperationView = z.infer<typeof operationView>;

/** One payout of a payout session (a session may hold several, each with the partner's reference). */
export const payoutView = z.object({
  reference: z.string().describe("The partner's reference of this payout (the session's own for its first)"),
  amount: minor,
  currency: z.string(),
  status: z.enum(PAYOUT_STATUSES),
  final: z.boolean().describe('The status is final and will never change'),
  payoutId: z.string().optional().describe("The provider's payout (po_...)"),
  providerStatus: z.string().optional().describe("The provider's transaction_status of the payout"),
  reason: endReasonView.optional(),
  addedAt: isoTime,
});
export type PayoutView = z.infer<typeof payoutView>;

export const refundView = z.object({
  reference: z.string().describe("The partner's reference of this refund"),
  amount: minor,
  currency: z.string(),
  status: z.enum(REFUND_STATUSES),
  refundId: z.string().optional().describe("The provider's refund record (rf_...)"),
  reason: endReasonView.optional().describe('Why it failed: the provider refused it'),
  requestedAt: isoTime,
  finishedAt: isoTime.optional(),
});
export type RefundView = z.infer<typeof refundView>;

export const attentionView = z
  .object({
    code: z.enum(ATTENTION_CODES).describe('What paysaga cannot do yet: one of a closed list'),
    ...reasonFields,
    since: isoTime,
  })
  .meta({ title: 'Attention' });
export type Attention = z.infer<typeof attentionView>;

export const totalsView = z.object({
  currency: z.string().optional(),
  held: minor.describe('frozen on the payer and not yet charged or released'),
  captured: minor.describe('charged from the payer'),
  refunded: minor.describe('returned by refunds'),
  chargedBack: minor.describe('returned by chargebacks'),
  paidOut: minor.describe('paid to a recipient'),
  net: minor.describe('captured - refunded - chargedBack (payments) or paidOut (payouts)'),
});
export type Totals = z.infer<typeof totalsView>;

export const sessionRequestView = z.object({
  money: moneyView.optional(),
  backUrl: z.string().optional().describe("The partner's page the payer is sent to after returning"),
  submerchantId: z.string().optional(),
  projectId: z.string().optional().describe('The provider project of its calls, when not the default'),
  approval: z.enum(APPROVAL_MODES).describe('Who approves: the policy (auto) or the partner (manual)'),
  finalization: z.enum(FINALIZATION_MODES).describe('Who finalizes a hold, and whether partially'),
  webhooks: z.boolean(),
});
export type SessionRequestView = z.infer<typeof sessionRequestView>;

export const sessionView = z.object({
  sessionId: z.string().describe('Provider session id (ps_...), also the workflow id'),
  kind: z.enum(SESSION_KINDS),
  reference: z.string().describe('The caller reference (or Idempotency-Key) it was created with'),
  phase: z.enum(SESSION_PHASES),
  final: z.boolean().describe('The phase is final and will never change'),
  reason: endReasonView.optional().describe('Why the session ended other than successfully'),
  attention: attentionView.optional().describe('What paysaga could not do yet and keeps trying'),
  request: sessionRequestView,
  money: moneyView.optional().describe('The amount asked for (request.money)'),
  totals: totalsView,
  operations: z.array(operationView),
  payouts: z
    .array(payoutView)
    .optional()
    .describe('Payout sessions: each payout with its own status, amount and result, in the order sent'),
  refunds: z.array(refundView),
  providerStatus: z.string().optional(),
  userAction: userAction.optional().describe('What the payer must do: 3-D Secure redirect or FPS QR'),
  publicToken: z.string().optional().describe('Payment form: the widget token'),
  recurringToken: z.string().optional(),
  lastSnapshot: sessionInfo.optional().describe('session_info as last seen'),
  events: z.array(sessionEventView),
  version: z.number().int().describe('Grows with every change: GET ?wait waits for a newer one'),
  createdAt: isoTime,
  finalAt: isoTime.optional(),
});
export type SessionView = z.infer<typeof sessionView>;

/**
 * One provider event as the session recorded it (the webhook audit trail): applied, a duplicate or older
 * than what it knew, refused (not signed by the provider, malformed, for another session: `detail`
 * says why) or taken as a reason to read the provider's state (`confirming`).
 */
export const providerEventRecordView = z.object({
  receivedAt: isoTime,
  type: z.string(),
  via: z.enum(['webhook', 'sync', 'replay', 'call']),
  outcome: z.enum(['applied', 'duplicate', 'older', 'refused', 'confirming']),
  updatedAt: z.string().optional().describe("The snapshot's updated_at"),
  detail: z.string().optional().describe('Why it was refused or not verified'),
});
export type ProviderEventRecord = z.infer<typeof providerEventRecordView>;

export const chargeRecordView = z.object({
  period: z.number().int(),
  attempt: z.number().int().describe('0: the scheduled charge; 1..: dunning retries'),
  sessionId: z.string().describe('ps_...: GET /v1/sessions/{id} shows it'),
  amount: minor,
  currency: z.string(),
  dueAt: isoTime.optional().describe('When its period fell due (calendar billing counts from the anchor)'),
  startedAt: isoTime,
  outcome: z.enum(['pending', 'succeeded', 'failed']),
  finishedAt: isoTime.optional(),
  reason: endReasonView.optional().describe('Why the charge failed'),
});
export type ChargeRecord = z.infer<typeof chargeRecordView>;

export const dunningView = z.object({
  period: z.number().int(),
  failures: z.number().int().describe('failed attempts of this period so far'),
  nextRetryAt: isoTime.optional(),
  lastReason: endReasonView.optional().describe("The last failed attempt's reason"),
  exhausted: z.boolean().describe('every retry failed: the subscription was canceled or is past_due'),
});
export type DunningState = z.infer<typeof dunningView>;

export const dunningPolicyView = z.object({
  retryDelaysMs: z.array(z.number().int()),
  onExhausted: z.enum(['cancel', 'pause']),
});
export type DunningPolicy = z.infer<typeof dunningPolicyView>;

export const subscriptionTotalsView = z.object({
  attempts: z.number().int(),
  succeeded: z.number().int(),
  failed: z.number().int(),
  chargedAmount: minor,
});
export type SubscriptionTotals = z.infer<typeof subscriptionTotalsView>;

export const billingScheduleView = z.object({
  interval: z.enum(BILLING_INTERVALS),
  count: z.number().int().describe('Intervals per period: month with 3 bills quarterly'),
  anchor: z
    .string()
    .describe('The first due date and the billing day (ISO 8601 with offset); due dates are counted from it'),
  timeZone: z.string().optional().describe("IANA zone of the calendar steps; absent: the anchor's offset"),
});

export const subscriptionView = z.object({
  subscriptionId: z.string().describe('`sub-<reference>`, also the workflow id'),
  reference: z.string(),
  status: z.enum(SUBSCRIPTION_STATUSES),
  attention: attentionView.optional().describe('A charge paysaga could not make or follow yet'),
  amount: moneyView,
  token: z.string().describe('The recurring token charged'),
  schedule: billingScheduleView.optional().describe('The calendar schedule in effect (absent: intervalMs)'),
  intervalMs: z.number().int().optional().describe('Fixed milliseconds between charges, without a schedule'),
  nextChargeAt: isoTime.optional().describe('Absent unless active: the next attempt (a due date or a retry)'),
  nextDueDates: z
    .array(isoTime)
    .optional()
    .describe('Up to three next due dates while active, with the changes accepted for later periods'),
  pendingChanges: z
    .array(
      z.object({
        fromPeriod: z.number().int(),
        amount: minor.optional(),
        schedule: billingScheduleView.optional(),
      }),
    )
    .optional()
    .describe('Changes accepted for later periods'),
  trialEnd: isoTime.optional().describe('No charge before it'),
  endAfterPeriods: z.number().int().optional().describe('Ends once this many periods are billed'),
  endAt: isoTime.optional().describe('Ends before the first period due at or after it'),
  period: z.number().int().describe('The period charged next (or being charged), from 1'),
  charges: z.array(chargeRecordView),
  totals: subscriptionTotalsView,
  dunning: dunningView.optional(),
  dunningPolicy: dunningPolicyView,
  canceledReason: endReasonView
    .optional()
    .describe('Why it was canceled: canceled_by_partner (detail: their words) or past_due'),
  runs: z.number().int().describe('Continue-as-new count: 0 in the first run'),
  createdAt: isoTime,
});
export type SubscriptionView = z.infer<typeof subscriptionView>;

// ---- search (GET /v1/sessions, GET /v1/subscriptions): summaries read from search attributes only ----

export const linksView = z.object({
  self: z.string(),
  temporal: z.string().optional().describe('The workflow in the Temporal UI (when configured)'),
});

export const sessionSummaryView = z.object({
  sessionId: z.string().describe('ps_...: GET /v1/sessions/{id} shows the whole session'),
  kind: z.enum(SESSION_KINDS),
  reference: z.string(),
  phase: z.enum(SESSION_PHASES),
  amount: minor.optional().describe('Asked for, or what a partial finalize charged'),
  currency: z.string().optional(),
  createdAt: isoTime,
  needsAttention: z.boolean(),
});
export type SessionSummary = z.infer<typeof sessionSummaryView>;

export const sessionPageView = z.object({
  sessions: z.array(sessionSummaryView.extend({ links: linksView })),
  hasMore: z.boolean().describe('Another page may follow: ask again with cursor = next'),
  next: z.string().optional().describe('Opaque cursor of the next page (same filters)'),
});

export const subscriptionSummaryView = z.object({
  subscriptionId: z.string().describe('sub-<reference>: GET /v1/subscriptions/{id} shows it'),
  reference: z.string(),
  status: z.enum(SUBSCRIPTION_STATUSES),
  amount: minor.optional().describe('Charged per period (from the next period after a change)'),
  currency: z.string().optional(),
  createdAt: isoTime,
  needsAttention: z.boolean(),
});
export type SubscriptionSummary = z.infer<typeof subscriptionSummaryView>;

export const subscriptionPageView = z.object({
  subscriptions: z.array(subscriptionSummaryView.extend({ links: linksView })),
  hasMore: z.boolean().describe('Another page may follow: ask again with cursor = next'),
  next: z.string().optional().describe('Opaque cursor of the next page (same filters)'),
});

// ---- reconciliation (GET /v1/reconciliation): the reconciler's report (common/reconciler.ts) ----

const passView = z.object({
  startedAt: isoTime,
  finishedAt: isoTime.optional(),
  checked: z.number().int().describe('sessions compared with the provider'),
  inSync: z.number().int(),
  repaired: z.number().int().describe('news the session had missed, now applied'),
  drift: z.number().int().describe('the provider contradicts a final result: reported, never rewritten'),
  failed: z.number().int().describe('could not be read this time; read again next pass'),
});

export const reconciliationView = z.object({
  workflowId: z.string().describe('reconciler-<task queue>'),
  status: z
    .enum(['running', 'stopped', 'not_started'])
    .describe('not_started: no worker has PAYSAGA_RECONCILE_EVERY_MS (nothing else is shown)'),
  passes: z.number().int().optional().describe('finished passes'),
  lastPass: passView.optional().describe('the last finished pass'),
  current: passView.optional().describe('the pass in progress, its counts so far'),
  totals: passView.omit({ startedAt: true, finishedAt: true }).optional().describe('over every pass'),
  findings: z
    .array(
      z.object({
        sessionId: z.string(),
        at: isoTime,
        outcome: z.enum(['repaired', 'drift', 'failed']),
        detail: z.string(),
      }),
    )
    .optional()
    .describe('the latest 50 sessions found repaired, drifting or failing, newest first'),
  listFailures: z.number().int().optional().describe('list calls that failed and were waited out'),
});
export type ReconciliationReport = z.infer<typeof reconciliationView>;

// ---- the API's own answers: every error, and the health check ----

export const fieldIssueView = z.object({
  field: z.string().describe('dot path of the field, as the caller sent it'),
  rule: z.string().describe('the rule it breaks'),
});
export type FieldIssue = z.infer<typeof fieldIssueView>;

export const errorEnvelopeView = z
  .object({
    error: z.object({
      code: z
        .string()
        .describe(
          'invalid_request, invalid_json, unauthorized, not_found, session_not_found, method_not_allowed, ' +
            'reference_conflict, provider_refused, invalid_state, outcome_unknown, provider_bad_response, ' +
            'provider_unavailable, temporal_unavailable, timeout, internal_error, ...',
        ),
      message: z.string(),
      fields: z
        .array(fieldIssueView)
        .optional()
        .describe('For invalid_request: each field (dot path) and the rule it breaks'),
      retryable: z
        .boolean()
        .describe('Whether sending the same request again (same Idempotency-Key) can succeed'),
    }),
  })
  .describe('Every error answer of the API');
export type ErrorEnvelope = z.infer<typeof errorEnvelopeView>;

export const healthView = z.object({
  status: z.enum(['ok', 'unavailable']),
  temporal: z.string().describe('`ok`, or the first line of why Temporal did not answer'),
});
export type Health = z.infer<typeof healthView>;
