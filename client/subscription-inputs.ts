/**
 * What a backend asks of recurring billing (docs/billing.md), validated with zod: the HTTP API uses these
 * same schemas, so a bad request names the same field and rule whichever way it comes in. Rules that
 * depend on where paysaga runs (periods under a day, delays under a minute: the provider's test
 * environment only) are checked by `checkForEnvironment`.
 */
import { z } from 'zod';
import {
  BILLING_LIMITS,
  DEFAULT_TIME_ZONE,
  isShortInterval,
  knownTimeZone,
  parseAnchor,
  scheduleProblem,
  type BillingInterval,
} from '../common/billing-calendar';
import {
  BILLING_DEFAULTS,
  BILLING_POLICY_LIMITS,
  CATCH_UP_POLICIES,
  DECLINE_CLASSES,
  ON_EXHAUSTED,
  OWED_POLICIES,
  PERIOD_STATUSES,
  PRORATION_POLICIES,
} from '../common/billing-policy';
import { SUBSCRIPTION_LIMITS } from '../common/subscription-input';
import { customer, money, reference, settingsOverrides, submerchantId } from './inputs';
import { InputValidationError } from './errors';
import type { FieldRule } from '../common/failures';

/** An ISO 8601 time with its offset, from 2000 to 2099, as epoch ms. */
const isoTime = z.iso
  .datetime({ offset: true })
  .max(40)
  .regex(/^20\d\d-/, { error: 'an ISO 8601 time from 2000 to 2099' })
  .transform((t) => Date.parse(t));

/** At most two years ahead (an anchor, a trial, a resume date): a date decades away is a mistake. */
const notTooFar = (t: number) => t <= Date.now() + SUBSCRIPTION_LIMITS.maxAheadMs;
const TOO_FAR = { error: 'at most two years ahead' };

const anchorFormat = z.iso
  .datetime({ offset: true })
  .max(40)
  .regex(/^20\d\d-/, { error: 'an ISO 8601 date-time with its offset, from 2000 to 2099' })
  .refine((a) => notTooFar(Date.parse(a)), TOO_FAR);

/** IANA time zones this runtime knows (canonical names), and UTC. */
const TIME_ZONES = ['UTC', ...Intl.supportedValuesOf('timeZone')] as [string, ...string[]];

/**
 * A calendar schedule (common/billing-calendar.ts): every due date counted from the anchor, month ends
 * clamped. Without an anchor: from the subscription's start (in a change: its billing day and time).
 * Without a zone: UTC (the response says so). One shape per interval, so the largest count of each is in
 * the OpenAPI document.
 */
const scheduleOf = <I extends BillingInterval>(interval: I) =>
  z.object({
    interval: z
      .literal(interval)
      .describe(
        isShortInterval(interval)
          ? "Only with the provider's test environment (the sandbox): never a real charge every few seconds"
          : "A calendar step in the schedule's time zone",
      ),
    count: z
      .number()
      .int()
      .min(1)
      .max(BILLING_LIMITS.maxCount[interval])
      .default(1)
      .describe('Intervals per period: month with 3 bills quarterly'),
    anchor: anchorFormat
      .optional()
      .describe(
        "The first due date and the billing day (ISO 8601 with Z or +hh:mm, the time zone's offset then; " +
          'at most two years ahead)',
      ),
    timeZone: z
      .enum(TIME_ZONES)
      .optional()
      .describe('IANA time zone of the calendar steps (Europe/Moscow); default UTC'),
  });

export const billingSchedule = z.discriminatedUnion('interval', [
  scheduleOf('second'),
  scheduleOf('minute'),
  scheduleOf('hour'),
  scheduleOf('day'),
  scheduleOf('week'),
  scheduleOf('month'),
  scheduleOf('year'),
]);
type ScheduleInput = z.output<typeof billingSchedule>;

/**
 * The anchor's offset must be the zone's at the anchor's instant: one way to say when. Only that rule here
 * (the fields' own rules report the rest, once).
 */
function checkSchedule(schedule: ScheduleInput | undefined, ctx: z.RefinementCtx, path: (string | number)[]) {
  if (!schedule?.anchor || !parseAnchor(schedule.anchor)) return;
  const timeZone = schedule.timeZone ?? DEFAULT_TIME_ZONE;
  if (!knownTimeZone(timeZone)) return;
  const problem = scheduleProblem({ ...schedule, anchor: schedule.anchor, timeZone });
  if (problem?.field === 'anchor')
    ctx.addIssue({ code: 'custom', path: [...path, 'anchor'], message: problem.rule });
}

const delay = z.number().int().positive().max(BILLING_POLICY_LIMITS.maxDelayMs);
const codeList = z
  .array(z.string().min(1).max(BILLING_POLICY_LIMITS.maxCodeLength))
  .max(BILLING_POLICY_LIMITS.maxCodes);

export const dunningInput = z
  .object({
    retryDelaysMs: z
      .array(delay)
      .max(BILLING_POLICY_LIMITS.maxRetries)
      .default([...BILLING_DEFAULTS.retryDelaysMs])
      .describe('After each soft decline of a period, in order (default 1, 3, 7 days)'),
    onExhausted: z
      .enum(ON_EXHAUSTED)
      .default(BILLING_DEFAULTS.onExhausted)
      .describe(
        'A period unpaid after its retries is owed; then: cancel (default), pause (past_due), continue',
      ),
    declineCodes: z
      .object({ hard: codeList.optional(), soft: codeList.optional(), unavailable: codeList.optional() })
      .optional()
      .describe("The provider's error codes to class otherwise than the defaults (docs/billing.md)"),
    otherDeclines: z
      .enum(['hard', 'soft'])
      .default(BILLING_DEFAULTS.otherDeclines)
      .describe('The class of an error code in no list (default soft)'),
    unavailableRetryMs: delay
      .default(BILLING_DEFAULTS.unavailableRetryMs)
      .describe('After a provider-unavailable result: the first wait, doubling to a day (default an hour)'),
  })
  .superRefine((d, ctx) => {
    const seen = new Map<string, string>();
    for (const c of DECLINE_CLASSES)
      (d.declineCodes?.[c] ?? []).forEach((code, i) => {
        const other = seen.get(code);
        if (other)
          ctx.addIssue({
            code: 'custom',
            path: ['declineCodes', c, i],
            message: `${code} is already listed as ${other}`,
          });
        seen.set(code, c);
      });
  });

export const billingPolicyInput = z.object({
  owed: z
    .enum(OWED_POLICIES)
    .default(BILLING_DEFAULTS.owed)
    .describe('An owed period: collect_with_next (default), leave_open (for the partner), write_off'),
  catchUp: z
    .enum(CATCH_UP_POLICIES)
    .default(BILLING_DEFAULTS.catchUp)
    .describe('Several periods due at once: one (default: the latest; the others owed per policy) or all'),
  proration: z
    .enum(PRORATION_POLICIES)
    .default(BILLING_DEFAULTS.proration)
    .describe('A change of amount or schedule mid-period: none (default) or next_invoice'),
  spacingMs: delay
    .default(BILLING_DEFAULTS.spacingMs)
    .describe('The least time between catch-up or collection charges (default an hour)'),
});

const subscriptionToken = z.string().min(1).max(SUBSCRIPTION_LIMITS.maxTokenLength);

export const subscriptionInput = z
  .object({
    reference,
    /** A recurring token from a first payment with allowRecurring (merchant-initiated charges). */
    token: subscriptionToken,
    amount: money,
    schedule: billingSchedule.describe('When each period falls due: `{interval, count, anchor, timeZone}`'),
    /** No charge before it: the first due date at or after it is the first charged. */
    trialEnd: isoTime.refine(notTooFar, TOO_FAR).optional(),
    /** Ends (status ended) once this many periods are billed. */
    endAfterPeriods: z.number().int().min(1).max(100_000).optional(),
    /** Ends before the first period due at or after this time. */
    endAt: isoTime.optional(),
    dunning: dunningInput.optional(),
    policy: billingPolicyInput.optional(),
    /** The payer (user_info, at least user_id): the provider requires it for every charge. */
    customer,
    settings: settingsOverrides.optional(),
    submerchantId: submerchantId.optional(),
  })
  .superRefine((i, ctx) => {
    checkSchedule(i.schedule, ctx, ['schedule']);
    if (i.endAt !== undefined && i.endAt <= Date.now())
      ctx.addIssue({ code: 'custom', path: ['endAt'], message: 'a time in the future' });
  });

export const subscriptionChangeInput = z
  .object({
    amount: z.number().int().positive().optional(),
    token: subscriptionToken.optional(),
    customer: customer.optional().describe("The payer's details (user_info), from the next attempt"),
    schedule: billingSchedule.optional(),
    /** Amount and schedule apply from this period (default: the next to fall due). */
    fromPeriod: z.number().int().min(1).max(1_000_000).optional(),
    proration: z
      .enum(PRORATION_POLICIES)
      .optional()
      .describe("A change mid-period: none or next_invoice (default: the subscription's policy)"),
  })
  .refine(
    (c) =>
      c.amount !== undefined || c.token !== undefined || c.customer !== undefined || c.schedule !== undefined,
    { path: ['amount'], message: 'send at least one of amount, token, customer, schedule' },
  )
  .superRefine((c, ctx) => checkSchedule(c.schedule, ctx, ['schedule']))
  .meta({
    anyOf: [
      { required: ['amount'] },
      { required: ['token'] },
      { required: ['customer'] },
      { required: ['schedule'] },
    ],
  });

export const subscriptionResumeInput = z.object({
  /** Bill from now on (a new anchor) instead of keeping the billing day. */
  restart: z.boolean().optional(),
});

export const subscriptionPauseInput = z.object({
  resumeAt: isoTime
    .refine((t) => t > Date.now(), { error: 'a time ahead' })
    .refine(notTooFar, TOO_FAR)
    .optional()
    .describe('Resumes on its own then (ISO 8601; at most two years ahead)'),
});

export const subscriptionCancelInput = z.object({
  reason: z.string().min(1).max(SUBSCRIPTION_LIMITS.maxReasonLength).optional(),
  atPeriodEnd: z
    .boolean()
    .optional()
    .describe('No charge after the period paid for, then canceled (default: at once)'),
});

const periodList = z.array(z.number().int().min(1).max(1_000_000)).min(1).max(1_000);

export const collectInput = z.object({
  periods: periodList.optional().describe('The owed periods to collect (default: every one owed)'),
});

export const writeOffInput = z.object({
  periods: periodList.optional().describe('The owed periods to write off (default: every one owed)'),
  reason: z.string().min(1).max(SUBSCRIPTION_LIMITS.maxReasonLength).optional(),
});

export const PERIOD_LIST_LIMIT = { default: 100, max: 500 } as const;

/**
 * What only the provider's test environment allows: periods under a day, and retries or spacing under a
 * minute. Outside it a request that asks for them is refused naming the field.
 */
export function checkForEnvironment(
  request: {
    schedule?: { interval: BillingInterval };
    dunning?: { retryDelaysMs: number[]; unavailableRetryMs: number };
    policy?: { spacingMs: number };
  },
  testMode: boolean,
): void {
  if (testMode) return;
  const fields: FieldRule[] = [];
  if (request.schedule && isShortInterval(request.schedule.interval))
    fields.push({
      field: 'schedule.interval',
      rule: "day, week, month or year (second, minute and hour only in the provider's test environment)",
    });
  const min = BILLING_POLICY_LIMITS.minDelayMs;
  const rule = `at least ${min} ms (shorter only in the provider's test environment)`;
  request.dunning?.retryDelaysMs.forEach((d, i) => {
    if (d < min) fields.push({ field: `dunning.retryDelaysMs.${i}`, rule });
  });
  if (request.dunning && request.dunning.unavailableRetryMs < min)
    fields.push({ field: 'dunning.unavailableRetryMs', rule });
  if (request.policy && request.policy.spacingMs < min) fields.push({ field: 'policy.spacingMs', rule });
  if (fields.length) throw new InputValidationError(fields);
}

export type SubscriptionStartInput = z.input<typeof subscriptionInput>;
export type SubscriptionChangeInput = z.input<typeof subscriptionChangeInput>;
export type SubscriptionResumeInput = z.input<typeof subscriptionResumeInput>;
export type SubscriptionPauseInput = z.input<typeof subscriptionPauseInput>;
export type SubscriptionCancelInput = z.input<typeof subscriptionCancelInput>;
export type CollectInput = z.input<typeof collectInput>;
export type WriteOffInput = z.input<typeof writeOffInput>;

/** `GET /v1/subscriptions/{id}/periods`: by status, a page at a time (`after` = the last page's `next`). */
export const periodQueryInput = z.strictObject({
  status: z.enum(PERIOD_STATUSES).optional().describe('Only periods in this status (owed: what is owed)'),
  after: z.coerce.number().int().min(0).max(1_000_000).optional().describe('Periods after this number'),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(PERIOD_LIST_LIMIT.max)
    .optional()
    .describe(`At most this many (default ${PERIOD_LIST_LIMIT.default})`),
});
