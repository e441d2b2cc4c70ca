/**
 * What paysaga answers about its resources: the session and the subscription as their workflows know
 * them. Defined once, in zod: the TypeScript types are inferred from these schemas, and the API's OpenAPI
 * document is generated from them. Workflows import the types only (`import type`).
 */
import { z } from 'zod';
import { BILLING_INTERVALS } from './billing-calendar';
import {
  CATCH_UP_POLICIES,
  CHARGE_KINDS,
  DECLINE_CLASSES,
  ON_EXHAUSTED,
  OWED_POLICIES,
  PERIOD_STATUSES,
  PRORATION_POLICIES,
} from './billing-policy';
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

// ---- recurring billing (docs/billing.md) ----

export const chargeRecordView = z.object({
  period: z.number().int(),
  attempt: z
    .number()
    .int()
    .describe('0: the charge on the due date; 1..: later attempts (dunning retries, collections)'),
  kind: z
    .enum(CHARGE_KINDS)
    .describe('due: on its due date; retry: a dunning retry; collect: an owed period collected later'),
  sessionId: z.string().describe('ps_...: GET /v1/sessions/{id} shows it'),
  reference: z.string().describe('`<reference>:p<period>[:r<attempt>]`: never a second session for it'),
  amount: minor,
  currency: z.string(),
  dueAt: isoTime.describe('When its period fell due (counted from the anchor)'),
  startedAt: isoTime,
  outcome: z.enum(['pending', 'succeeded', 'failed']),
  finishedAt: isoTime.optional(),
  reason: endReasonView.optional().describe('Why the charge failed'),
  declineClass: z
    .enum(DECLINE_CLASSES)
    .optional()
    .describe('How the failure was classed (hard, soft, unavailable): what dunning did next'),
});
export type ChargeRecord = z.infer<typeof chargeRecordView>;

export const billingPeriodView = z
  .object({
    period: z.number().int().describe("From 1; the number in its charges' references"),
    dueAt: isoTime,
    amount: minor.describe('What the period costs: its price plus any proration carried into it'),
    currency: z.string(),
    adjustment: minor
      .optional()
      .describe('Proration carried into this period (positive: charged, negative: credited)'),
    status: z
      .enum(PERIOD_STATUSES)
      .describe(
        'due: fell due, no attempt yet; attempted: being charged or retried; paid; owed: unpaid after its ' +
          'retries (collected later or written off); written_off',
      ),
    attempts: z.number().int().describe('Charges made for it so far'),
    paidAt: isoTime.optional(),
    paidBy: z.string().optional().describe('The session that paid it (absent: paid by credit)'),
    owedSince: isoTime.optional().describe('When it became owed (kept after it is collected)'),
    writtenOffAt: isoTime.optional(),
    writeOffReason: z.string().optional().describe("The partner's words, or the policy that wrote it off"),
    lastReason: endReasonView.optional().describe("The last failed attempt's reason"),
    declineClass: z.enum(DECLINE_CLASSES).optional().describe('The class of the last decline'),
  })
  .meta({ title: 'BillingPeriod' });
export type BillingPeriodView = z.infer<typeof billingPeriodView>;

/** A period as the store keeps it, with every charge attempt made for it (GET .../periods). */
export const storedPeriodView = billingPeriodView
  .extend({
    charges: z.array(
      chargeRecordView
        .pick({
          attempt: true,
          kind: true,
          sessionId: true,
          reference: true,
          amount: true,
          currency: true,
          startedAt: true,
          outcome: true,
          finishedAt: true,
          declineClass: true,
        })
        .extend({
          reasonCode: z.enum(END_REASON_CODES).optional().describe("The failed attempt's reason code"),
        }),
    ),
  })
  .meta({ title: 'StoredBillingPeriod' });
export type StoredPeriod = z.infer<typeof storedPeriodView>;
export type StoredCharge = StoredPeriod['charges'][number];

export const periodPageView = z.object({
  periods: z.array(storedPeriodView),
  hasMore: z.boolean().describe('More periods follow: ask again with after = next'),
  next: z.number().int().optional().describe('The last period of this page (`after` of the next)'),
});
export type PeriodPage = z.infer<typeof periodPageView>;

export const dunningView = z.object({
  period: z.number().int(),
  failures: z.number().int().describe('Declines of this period so far (provider unavailable is none)'),
  nextRetryAt: isoTime.optional(),
  lastReason: endReasonView.optional().describe("The last failed attempt's reason"),
  declineClass: z.enum(DECLINE_CLASSES).optional().describe('The class of the last failure'),
  exhausted: z.boolean().describe('No retry left: the period is owed'),
});
export type DunningState = z.infer<typeof dunningView>;

export const dunningPolicyView = z.object({
  retryDelaysMs: z.array(z.number().int()).describe('After each soft decline of a period, in order'),
  onExhausted: z
    .enum(ON_EXHAUSTED)
    .describe('When a period stays unpaid after its retries: cancel, pause (past_due) or continue'),
  declineCodes: z
    .object({
      hard: z.array(z.string()),
      soft: z.array(z.string()),
      unavailable: z.array(z.string()),
    })
    .describe("The provider's error codes of each class"),
  otherDeclines: z.enum(['hard', 'soft']).describe('The class of a code in none of the lists'),
  unavailableRetryMs: z
    .number()
    .int()
    .describe('After a provider-unavailable result: the first wait, doubling to a day'),
});
export type DunningPolicy = z.infer<typeof dunningPolicyView>;

export const billingPolicyView = z.object({
  owed: z
    .enum(OWED_POLICIES)
    .describe('An owed period: collect_with_next, leave_open (for the partner) or write_off'),
  catchUp: z
    .enum(CATCH_UP_POLICIES)
    .describe('Several periods due at once: one (the latest; the others owed per policy) or all'),
  proration: z.enum(PRORATION_POLICIES).describe('A change mid-period: none, or next_invoice'),
  spacingMs: z
    .number()
    .int()
    .describe('The least time between two charges that were not each on their own due date'),
});
export type BillingPolicy = z.infer<typeof billingPolicyView>;

export const subscriptionTotalsView = z.object({
  attempts: z.number().int(),
  succeeded: z.number().int(),
  failed: z.number().int(),
  chargedAmount: minor,
  owedPeriods: z.number().int().describe('Periods owed now'),
  owedAmount: minor.describe('What they amount to'),
  writtenOffPeriods: z.number().int(),
  writtenOffAmount: minor,
  collectedPeriods: z.number().int().describe('Owed periods paid later'),
});
export type SubscriptionTotals = z.infer<typeof subscriptionTotalsView>;

/** A new subscription's totals: nothing tried, paid, owed or written off yet. */
export function noSubscriptionTotals(): SubscriptionTotals {
  return {
    attempts: 0,
    succeeded: 0,
    failed: 0,
    chargedAmount: 0,
    owedPeriods: 0,
    owedAmount: 0,
    writtenOffPeriods: 0,
    writtenOffAmount: 0,
    collectedPeriods: 0,
  };
}

export const billingScheduleView = z.object({
  interval: z.enum(BILLING_INTERVALS),
  count: z.number().int().describe('Intervals per period: month with 3 bills quarterly'),
  anchor: z
    .string()
    .describe('The first due date and the billing day (ISO 8601 with offset); due dates are counted from it'),
  timeZone: z.string().describe('IANA zone of the calendar steps (UTC when none was named)'),
});

export const cancelationView = z.object({
  atPeriodEnd: z.boolean().describe('Takes effect at the end of the period paid for, not at once'),
  requestedAt: isoTime,
  effectiveAt: isoTime.optional().describe('When it took (or takes) effect'),
  reason: endReasonView.optional(),
});

export const subscriptionView = z.object({
  subscriptionId: z.string().describe('`sub-<reference>`, also the workflow id'),
  reference: z.string(),
  status: z.enum(SUBSCRIPTION_STATUSES),
  attention: attentionView.optional().describe('A charge paysaga could not make or follow yet'),
  amount: moneyView,
  token: z.string().describe('The recurring token charged'),
  schedule: billingScheduleView,
  nextChargeAt: isoTime
    .optional()
    .describe('Absent unless active: the next attempt (a due date, a retry or a collection)'),
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
  credit: minor
    .optional()
    .describe('Proration carried to the next period (positive: charged with it, negative: credited)'),
  trialEnd: isoTime.optional().describe('No charge before it'),
  endAfterPeriods: z.number().int().optional().describe('Ends once this many periods are billed'),
  endAt: isoTime.optional().describe('Ends before the first period due at or after it'),
  period: z.number().int().describe('The next period to fall due (or the one being charged), from 1'),
  periods: z
    .array(billingPeriodView)
    .describe('Every period owed or being charged, and the latest others (the store keeps them all)'),
  collecting: z
    .array(z.number().int())
    .optional()
    .describe('Owed periods queued to be collected, in order, one charge at a time'),
  charges: z.array(chargeRecordView).describe('The latest 50 charge attempts, oldest first'),
  totals: subscriptionTotalsView,
  dunning: dunningView.optional(),
  paymentMethodRequired: z
    .boolean()
    .optional()
    .describe('A hard decline: billing waits for a new token (change) and a resume'),
  pausedUntil: isoTime.optional().describe('Paused with a resume date: resumes then'),
  cancelation: cancelationView
    .optional()
    .describe('A cancel asked for: at once, or at the end of the period paid for'),
  canceledReason: endReasonView
    .optional()
    .describe('Why it was canceled: canceled_by_partner (detail: their words) or past_due'),
  dunningPolicy: dunningPolicyView,
  policy: billingPolicyView,
  runs: z.number().int().describe('Continue-as-new count: one run per billing period'),
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
