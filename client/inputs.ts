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
export const submerchantId = z
  .string()
  .min(1)
  .max(128)
  .regex(SUBMERCHANT_ID_PATTERN, 'visible ASCII characters (it is sent as the X-Submerchant-Id header)')
  .describe('sent as X-Submerchant-Id on every call of this session');

/** The payer (user_info) and participants as the provider takes them, within PARTY_BOUNDS. */
export const customer = boundedJson(userInfo, PARTY_BOUNDS);
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
  /** The same rule for the OpenAPI document. */
  meta: {
    dependentSchemas: {
      subPartner: {
        properties: {
          extraInfo: {
            type: 'object',
            not: { anyOf: [{ required: ['merchant'] }, { required: ['submerchant'] }] },
          },
        },
      },
    },
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
  .refine(partialWithinAmount, partialRule)
  .meta(subPartnerRule.meta);

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
  .refine(partialWithinAmount, partialRule)
  .meta(subPartnerRule.meta);

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
    ...subPartnerRule.meta,
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
    ...subPartnerRule.meta,
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
  .meta({ ...fpsPayerRule.meta, ...subPartnerRule.meta });

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
  .refine(subPartnerRule.check, subPartnerRule.issue)
  .meta(subPartnerRule.meta);

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
  })
  .meta(subPartnerRule.meta);

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
export { CardDetails, HashedCardDetails };
