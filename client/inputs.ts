/**
 * What a backend service asks for, validated with zod. The HTTP API uses these same schemas,
 * so a bad request names the same field and rule whichever way it comes in.
 */
import { z } from 'zod';
import { CardDetails, HashedCardDetails } from '../provider/schemas/card';
import { SUBMERCHANT_ID_PATTERN } from '../provider/config';
import { cardDetails, hashedCardDetails, participantInfo, userInfo } from '../provider/schemas';
import { SETTINGS_BOUNDS } from '../common/settings';
import { SUBSCRIPTION_LIMITS } from '../common/subscription-input';
import { BILLING_LIMITS, type BillingInterval } from '../common/billing-calendar';
import { PAYOUT_LIMITS } from '../common/payouts';
import {
  boundedJson,
  EXTRA_INFO_BOUNDS,
  PARTY_BOUNDS,
  REFUND_EXTRA_INFO_BOUNDS,
} from '../common/json-bounds';

export const reference = z
  .string()
  .min(4)
  .max(64)
  .regex(/^[A-Za-z0-9._:-]+$/, 'letters, digits and . _ : - only');

export const money = z.object({
  amount: z.number().int().positive(),
  currency: z
    .string()
    .regex(/^[A-Za-z]{3}$/, 'a 3-letter ISO 4217 code')
    .transform((c) => c.toLowerCase()),
});

/** Milliseconds within one of SETTINGS_BOUNDS (so no setting can outgrow a workflow's history). */
const ms = (b: { min: number; max: number }) => z.number().int().min(b.min).max(b.max);
const B = SETTINGS_BOUNDS;

export const settingsOverrides = z
  .object({
    approval: z.discriminatedUnion('mode', [
      z.object({ mode: z.literal('auto') }),
      z.object({ mode: z.literal('manual'), deadlineMs: ms(B.decisionDeadlineMs) }),
    ]),
    finalization: z.discriminatedUnion('mode', [
      z.object({ mode: z.literal('auto') }),
      z.object({ mode: z.literal('auto_partial'), amount: z.number().int().positive() }),
      z.object({ mode: z.literal('manual'), deadlineMs: ms(B.decisionDeadlineMs) }),
    ]),
    polling: z
      .object({
        webhooks: z.boolean(),
        lateAfterMs: ms(B.pollMs),
        initialMs: ms(B.pollMs),
        maxMs: ms(B.pollMs),
        factor: z.number().min(B.factor.min).max(B.factor.max),
        payerMaxMs: ms(B.pollMs),
      })
      .partial(),
    deadlines: z
      .object({ payerActionMs: ms(B.payerActionMs), sessionMs: ms(B.sessionMs), startMs: ms(B.startMs) })
      .partial(),
    followMs: ms(B.followMs),
    recheckMs: ms(B.recheckMs),
  })
  .partial();

/** A partial finalize of more than the payment's amount would be refused and leave the hold frozen. */
const partialWithinAmount = <
  T extends { amount: { amount: number }; settings?: z.infer<typeof settingsOverrides> },
>(
  r: T,
) => r.settings?.finalization?.mode !== 'auto_partial' || r.settings.finalization.amount <= r.amount.amount;
const partialRule = {
  path: ['settings', 'finalization', 'amount'],
  message: 'at most the payment amount',
};

// Anything but a valid header value cannot be sent at all: the session's provider calls would fail until
// its deadline (schemathesis found a create that hung on one).
const submerchantId = z
  .string()
  .min(1)
  .max(128)
  .regex(SUBMERCHANT_ID_PATTERN, 'visible ASCII characters (it is sent as the X-Submerchant-Id header)')
  .describe('sent as X-Submerchant-Id on every call of this session');

/** The payer (user_info) and participants as the provider takes them, within PARTY_BOUNDS. */
const customer = boundedJson(userInfo, PARTY_BOUNDS);
const participant = boundedJson(participantInfo, PARTY_BOUNDS);

const common = {
  reference,
  customer: customer.optional(),
  participant: participant.optional(),
  extraInfo: boundedJson(z.unknown(), EXTRA_INFO_BOUNDS)
    .optional()
    .describe('any JSON value, echoed by the provider in every snapshot: at most 4096 bytes, 8 levels deep'),
  settings: settingsOverrides.optional(),
  submerchantId: submerchantId.optional(),
  subPartner: z
    .object({
      merchant: z.literal('').optional().describe('left blank, as the provider asks'),
      submerchant: z
        .url({ protocol: /^https?$/ })
        .max(2_048)
        .describe('the payment site URL'),
    })
    .optional()
    .describe(
      'A transaction handled by a sub-partner: sent as extra_info {merchant: "", submerchant} ' +
        '(with extraInfo, which must then be an object without those two keys)',
    ),
};

/** A sub-partner's fields travel in extra_info: any extraInfo beside them must be an object to merge with. */
const subPartnerRule = {
  check: (r: { subPartner?: unknown; extraInfo?: unknown }) =>
    r.subPartner === undefined ||
    r.extraInfo === undefined ||
    (typeof r.extraInfo === 'object' &&
      r.extraInfo !== null &&
      !Array.isArray(r.extraInfo) &&
      !('merchant' in r.extraInfo) &&
      !('submerchant' in r.extraInfo)),
  issue: {
    path: ['extraInfo'],
    message: 'with subPartner, an object without merchant or submerchant (they are merged into extra_info)',
  },
};

/** The payer: the provider requires user_info for every payment (spec: init/checkout, start/checkout). */
const payer = { ...common, customer };

/** A card to charge: the number, expiry and code (a payout needs the number only). */
const CHARGE_FIELDS = ['card_exp_month', 'card_exp_year', 'card_code'];
const chargeableCard = cardDetails
  .superRefine((card, ctx) => {
    const fields: Record<string, unknown> =
      card instanceof CardDetails ? card.masked() : (card as Record<string, unknown>);
    for (const field of CHARGE_FIELDS)
      if (fields[field] === undefined || fields[field] === '')
        ctx.addIssue({ code: 'custom', path: [field], message: 'required to charge a card' });
  })
  .meta({ required: ['card_number', ...CHARGE_FIELDS] });

/** FPS (spec, Endpoints rule 6): the payer is identified by user id or IP address. */
const fpsPayerRule = {
  check: (r: { customer?: { user_id?: string }; participant?: { payer_info?: { ipv4_address?: string } } }) =>
    Boolean(r.customer?.user_id || r.participant?.payer_info?.ipv4_address),
  issue: {
    path: ['customer', 'user_id'],
    message: 'customer.user_id or participant.payer_info.ipv4_address is required for FPS',
  },
  // Said as "without a user id, the payer's IP address is required" (if/then), not as a choice of two
  // partial shapes (anyOf): generators made a model of each part (openapi-python-client named two
  // `...Type1Participant` and dropped both), where there is one request.
  meta: {
    allOf: [
      {
        if: { not: { required: ['customer'], properties: { customer: { required: ['user_id'] } } } },
        then: {
          required: ['participant'],
          properties: {
            participant: {
              required: ['payer_info'],
              properties: { payer_info: { required: ['ipv4_address'] } },
            },
          },
        },
      },
    ],
  },
};

const backUrl = z.url({ protocol: /^https?$/ }).max(2_048);
/** A token the provider made (public, tokenized card, recurring): opaque, of a sane length. */
const providerToken = z.string().min(1).max(SUBSCRIPTION_LIMITS.maxTokenLength);
/** An FPS bank id from the provider's bank list. */
const bankId = z.string().min(1).max(64);

export const cardCheckoutInput = z
  .object({
    ...payer,
    amount: money,
    card: chargeableCard,
    backUrl: backUrl.optional(),
    allowRecurring: z.boolean().optional(),
  })
  .refine(subPartnerRule.check, subPartnerRule.issue)
  .refine(partialWithinAmount, partialRule);

export const paymentFormInput = z
  .object({
    ...payer,
    amount: money,
    widget: z
      .object({ lang: z.string().min(2).max(5).optional(), showAutopayOption: z.boolean().optional() })
      .default({}),
    backUrl: backUrl.optional(),
    /**
     * A recurring token from this payment on the partner's own recorded consent (spec rule 9), without
     * the widget's checkbox (showAutopayOption lets the payer give it there instead).
     */
    allowRecurring: z.boolean().optional(),
  })
  .refine(subPartnerRule.check, subPartnerRule.issue)
  .refine(partialWithinAmount, partialRule);

export const recurringPaymentInput = z
  .object({
    ...payer,
    amount: money,
    token: providerToken,
    initiatedBy: z.enum(['merchant', 'client']).default('merchant'),
    backUrl: backUrl.optional(),
  })
  .refine(subPartnerRule.check, subPartnerRule.issue)
  .refine((r) => r.initiatedBy === 'merchant' || r.backUrl, {
    path: ['backUrl'],
    message: 'required when initiatedBy is client (3-D Secure)',
  })
  .refine(partialWithinAmount, partialRule)
  .meta({
    if: { required: ['initiatedBy'], properties: { initiatedBy: { const: 'client' } } },
    then: { required: ['backUrl'] },
  });

export const fpsPaymentInput = z
  .object({
    ...payer,
    amount: money,
    moneyPurpose: z.string().min(1).max(210).optional(),
    backUrl: backUrl.optional(),
    qrRenewals: z.number().int().min(0).max(10).default(0),
    /** The provider's FPS page shows the QR and the deep link (a public token in the view), not paysaga. */
    widget: z.object({ lang: z.string().min(2).max(5).optional() }).optional(),
    /** A recurring token from this payment (spec rule 9: the partner holds the payer's consent). */
    allowRecurring: z.boolean().optional(),
  })
  .refine((r) => !r.widget || (!r.qrRenewals && !r.moneyPurpose), {
    path: ['widget'],
    message: 'the FPS page starts the payment itself: no qrRenewals or moneyPurpose with it',
  })
  .refine(subPartnerRule.check, subPartnerRule.issue)
  .refine(fpsPayerRule.check, fpsPayerRule.issue)
  .meta({
    ...fpsPayerRule.meta,
    // The FPS page starts the payment itself: no purpose or renewals of paysaga's own QR with it.
    if: { required: ['widget'] },
    then: { properties: { moneyPurpose: false, qrRenewals: { const: 0 } } },
  });

export const fpsBindingInput = z
  .object({
    ...common,
    backUrl: backUrl.optional(),
    currency: z
      .string()
      .regex(/^[A-Za-z]{3}$/)
      .default('rub'),
  })
  .refine(subPartnerRule.check, subPartnerRule.issue)
  // the rule applies to the binding's start/checkout too
  .refine(fpsPayerRule.check, fpsPayerRule.issue)
  .meta(fpsPayerRule.meta);

/** Destinations paysaga's workflow sends to itself: no card data, so nothing of it passes through Temporal. */
const tokenDestinations = [
  z.object({ type: z.literal('tokenized_card'), token: providerToken }),
  z.object({ type: z.literal('recurring_token'), token: providerToken }),
  z.object({
    type: z.literal('fps_account'),
    phone: z.string().regex(/^\+?\d{10,15}$/, 'a phone number of 10 to 15 digits'),
    bankId,
  }),
] as const;

export const payoutDestination = z.discriminatedUnion('type', [
  z.object({ type: z.literal('card'), card: cardDetails }),
  z.object({ type: z.literal('hashed_card'), card: hashedCardDetails }),
  ...tokenDestinations,
]);

export const payoutInput = z
  .object({ ...common, amount: money, destination: payoutDestination })
  .refine(subPartnerRule.check, subPartnerRule.issue);

/** One payout of a session of several: its own reference (unique in the session), amount and recipient. */
export const sessionPayoutInput = z.object({
  reference,
  amount: money,
  destination: z
    .discriminatedUnion('type', [...tokenDestinations])
    .describe(
      'tokenized_card, recurring_token or fps_account (a payout to card data needs a session of its own)',
    ),
  customer: customer.optional().describe("sent as this payout's user_info"),
  participant: participant.optional().describe("sent as this payout's participant_info"),
});

/** Several payouts in one session, sent one at a time in this order, each with its own result. */
export const payoutBatchInput = z
  .object({
    reference,
    payouts: z.array(sessionPayoutInput).min(1).max(PAYOUT_LIMITS.perSession),
    settings: common.settings,
    submerchantId: common.submerchantId,
    extraInfo: common.extraInfo,
    subPartner: common.subPartner,
  })
  .refine(subPartnerRule.check, subPartnerRule.issue)
  .superRefine((batch, ctx) => {
    const currency = batch.payouts[0]?.amount.currency;
    const seen = new Set<string>();
    batch.payouts.forEach((p, i) => {
      if (seen.has(p.reference))
        ctx.addIssue({ code: 'custom', path: ['payouts', i, 'reference'], message: 'unique in the batch' });
      seen.add(p.reference);
      if (p.amount.currency !== currency)
        ctx.addIssue({
          code: 'custom',
          path: ['payouts', i, 'amount', 'currency'],
          message: `the batch's one currency (${currency})`,
        });
    });
  });

export const identityCheckInput = z.object({
  reference,
  phone: z.string().regex(/^\+?\d{10,15}$/, 'a phone number of 10 to 15 digits'),
  bankId,
  payee: boundedJson(participantInfo.shape.payee_info.unwrap(), PARTY_BOUNDS),
  settings: settingsOverrides.optional(),
  submerchantId: submerchantId.optional(),
});

export const refundInput = z.object({
  reference,
  amount: z.number().int().positive().optional(),
  extraInfo: boundedJson(z.unknown(), REFUND_EXTRA_INFO_BOUNDS)
    .optional()
    .describe("sent as the refund's extra_info: any JSON value, at most 1024 bytes, 4 levels deep"),
});

const DAY_MS = 24 * 3_600_000;

/**
 * When a first charge may be: epoch ms from 10^12 (2001-09-09; anything smaller is seconds sent where
 * milliseconds are meant, which would charge at once) to 2100. Without the upper bound, a number past
 * what a Date holds (8.64e15) would reach the workflow and fail it on every task.
 */
export const FIRST_CHARGE_BOUNDS = { min: 1e12, max: Date.UTC(2100, 0, 1) } as const;
/** Around now, when a schedule may start: from a day back (charged at once) to two years ahead. */
export const FIRST_CHARGE_WINDOW = { pastMs: DAY_MS, aheadMs: 2 * 366 * DAY_MS } as const;

const intervalMs = z
  .number()
  .int()
  .min(SUBSCRIPTION_LIMITS.minIntervalMs)
  .max(SUBSCRIPTION_LIMITS.maxIntervalMs);
const subscriptionToken = z.string().min(1).max(SUBSCRIPTION_LIMITS.maxTokenLength);

/** An ISO 8601 time with its offset, from 2000 to 2099, as epoch ms. */
const isoTime = z.iso
  .datetime({ offset: true })
  .max(40)
  .regex(/^20\d\d-/, { error: 'an ISO 8601 time from 2000 to 2099' })
  .transform((t) => Date.parse(t));

const anchorFormat = z.iso
  .datetime({ offset: true })
  .max(40)
  .regex(/^20\d\d-/, { error: 'an ISO 8601 date-time with its offset, from 2000 to 2099' });

/** IANA time zones this runtime knows (canonical names), and UTC. */
const TIME_ZONES = ['UTC', ...Intl.supportedValuesOf('timeZone')] as [string, ...string[]];

/**
 * A calendar schedule (common/billing-calendar.ts): every due date counted from the anchor, month ends
 * clamped. Without an anchor: from the subscription's start (in a change: its billing day and time).
 * One shape per interval, so the largest count of each is in the OpenAPI document.
 */
const scheduleOf = <I extends BillingInterval>(interval: I) =>
  z.object({
    interval: z.literal(interval),
    count: z
      .number()
      .int()
      .min(1)
      .max(BILLING_LIMITS.maxCount[interval])
      .default(1)
      .describe('Intervals per period: month with 3 bills quarterly'),
    anchor: anchorFormat
      .optional()
      .describe('The first due date and the billing day (ISO 8601 with Z or +hh:mm)'),
    timeZone: z
      .enum(TIME_ZONES)
      .optional()
      .describe("IANA time zone of the calendar steps (Europe/Moscow); default: the anchor's offset"),
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

/** Dunning defaults: retry after 1, 3 and 7 days, then cancel. */
export const DEFAULT_DUNNING = {
  retryDelaysMs: [DAY_MS, 3 * DAY_MS, 7 * DAY_MS],
  onExhausted: 'cancel',
} as const;

export const subscriptionInput = z
  .object({
    reference,
    /** A recurring token from a first payment with allowRecurring (merchant-initiated charges). */
    token: subscriptionToken,
    amount: money,
    /** Calendar billing (preferred): `{interval, count, anchor, timeZone}`. */
    schedule: billingSchedule.optional(),
    /** Fixed milliseconds between charges, without a billing day (the older input; prefer schedule). */
    intervalMs: intervalMs.optional(),
    /** No charge before it: the first due date at or after it is the first charged. */
    trialEnd: isoTime.optional(),
    /** Ends (status ended) once this many periods are billed. */
    endAfterPeriods: z.number().int().min(1).max(100_000).optional(),
    /** Ends before the first period due at or after this time. */
    endAt: isoTime.optional(),
    /** intervalMs only (a schedule starts on its anchor): ISO 8601 time or epoch ms of the first charge. */
    firstChargeAt: z
      .union([
        // Past times charge at once; the year keeps a typo (or seconds) from reaching a date no timer holds.
        z.iso
          .datetime({ offset: true })
          .max(64)
          .regex(/^20\d\d-/, { error: 'an ISO 8601 time before the year 2100' }),
        z
          .number()
          .int()
          .min(FIRST_CHARGE_BOUNDS.min, {
            error: 'epoch milliseconds (this looks like seconds: multiply by 1000), or an ISO 8601 time',
          })
          .max(FIRST_CHARGE_BOUNDS.max, { error: 'epoch milliseconds before 2100-01-01T00:00:00Z' }),
      ])
      .transform((t) => (typeof t === 'number' ? t : Date.parse(t)))
      // A schedule starts now or soon: a time days back is a mistake (a wrong year, a stale value), not
      // a wish to charge at once, and one years ahead is one too.
      .refine((t) => t >= Date.now() - FIRST_CHARGE_WINDOW.pastMs, {
        error: 'a time at most a day in the past (omit it to charge at once)',
      })
      .refine((t) => t <= Date.now() + FIRST_CHARGE_WINDOW.aheadMs, {
        error: 'a time at most two years ahead',
      })
      .optional(),
    dunning: z
      .object({
        retryDelaysMs: z
          .array(z.number().int().positive().max(SUBSCRIPTION_LIMITS.maxIntervalMs))
          .max(SUBSCRIPTION_LIMITS.maxRetries)
          .default([...DEFAULT_DUNNING.retryDelaysMs]),
        onExhausted: z.enum(['cancel', 'pause']).default(DEFAULT_DUNNING.onExhausted),
      })
      .optional(),
    /** The payer (user_info, at least user_id): the provider requires it for every charge. */
    customer,
    settings: settingsOverrides.optional(),
    submerchantId: submerchantId.optional(),
    /** Continue-as-new after this many periods (bounds the workflow's history). */
    periodsPerRun: z.number().int().min(1).max(1_000).optional(),
  })
  .superRefine((i, ctx) => {
    if (i.schedule === undefined && i.intervalMs === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['schedule'],
        message: 'required: a calendar schedule (or intervalMs)',
      });
    if (i.schedule !== undefined && i.intervalMs !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['intervalMs'],
        message: 'send schedule or intervalMs, not both',
      });
    if (i.schedule !== undefined && i.firstChargeAt !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['firstChargeAt'],
        message: 'with a schedule, the first charge is schedule.anchor (or trialEnd)',
      });
    if (i.endAt !== undefined && i.endAt <= Date.now())
      ctx.addIssue({ code: 'custom', path: ['endAt'], message: 'a time in the future' });
  })
  // A schedule (which starts on its anchor) or the older intervalMs (with firstChargeAt), never both.
  .meta({
    oneOf: [
      {
        required: ['schedule'],
        not: { anyOf: [{ required: ['intervalMs'] }, { required: ['firstChargeAt'] }] },
      },
      { required: ['intervalMs'], not: { required: ['schedule'] } },
    ],
  });

export const subscriptionChangeInput = z
  .object({
    amount: z.number().int().positive().optional(),
    token: subscriptionToken.optional(),
    schedule: billingSchedule.optional(),
    intervalMs: intervalMs.optional(),
    /** Amount and schedule apply from this period (default: the first not started). */
    fromPeriod: z.number().int().min(1).max(1_000_000).optional(),
  })
  .refine(
    (c) =>
      c.amount !== undefined ||
      c.token !== undefined ||
      c.intervalMs !== undefined ||
      c.schedule !== undefined,
    { path: ['amount'], message: 'send at least one of amount, token, schedule, intervalMs' },
  )
  // intervalMs is the older input: never with a schedule, and it applies from the next period only.
  .refine((c) => c.intervalMs === undefined || (c.schedule === undefined && c.fromPeriod === undefined), {
    path: ['intervalMs'],
    message: 'not with schedule or fromPeriod (send schedule instead)',
  })
  .meta({
    anyOf: [
      { required: ['amount'] },
      { required: ['token'] },
      { required: ['schedule'] },
      { required: ['intervalMs'] },
    ],
    not: { anyOf: [{ required: ['intervalMs', 'schedule'] }, { required: ['intervalMs', 'fromPeriod'] }] },
  });

export const subscriptionResumeInput = z.object({
  /** Bill from now on (a new anchor) instead of keeping the billing day. */
  restart: z.boolean().optional(),
});

export const subscriptionCancelInput = z.object({ reason: z.string().min(1).max(500).optional() });

export type CardCheckoutInput = z.input<typeof cardCheckoutInput>;
export type PaymentFormInput = z.input<typeof paymentFormInput>;
export type RecurringPaymentInput = z.input<typeof recurringPaymentInput>;
export type FpsPaymentInput = z.input<typeof fpsPaymentInput>;
export type FpsBindingInput = z.input<typeof fpsBindingInput>;
export type PayoutInput = z.input<typeof payoutInput>;
export type PayoutBatchInput = z.input<typeof payoutBatchInput>;
export type SessionPayoutInput = z.input<typeof sessionPayoutInput>;
export type IdentityCheckInput = z.input<typeof identityCheckInput>;
export type RefundRequestInput = z.input<typeof refundInput>;
export type SubscriptionStartInput = z.input<typeof subscriptionInput>;
export type SubscriptionChangeInput = z.input<typeof subscriptionChangeInput>;
export type SubscriptionResumeInput = z.input<typeof subscriptionResumeInput>;
export { CardDetails, HashedCardDetails };
