import { z } from 'zod';
import { CardDetails, HashedCardDetails } from './card';

/**
 * Payment and payout instruments. Examples in the spec also use `card` and `recurrent`
 * in place of `card_info` and `recurring_token_info`; input in either form is normalized to the table names.
 */
const TYPE_ALIASES: Record<string, string> = { card: 'card_info', recurrent: 'recurring_token_info' };

export function normalizeInstrument(value: unknown): unknown {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
  const v = value as Record<string, unknown>;
  const alias = typeof v.type === 'string' ? TYPE_ALIASES[v.type] : undefined;
  if (!alias) return value;
  const { [v.type as string]: body, ...rest } = v;
  return { ...rest, type: alias, [alias]: rest[alias] ?? body };
}

const digits = (min: number, max: number) =>
  z.string().regex(new RegExp(`^\\d{${min},${max}}$`), 'invalid_format');

/** Card fields as the payer or partner types them (also the sandbox's widget forms). */
export const cardDetailsFields = z.object({
  card_number: digits(12, 19),
  card_exp_month: z
    .string()
    .regex(/^(0?[1-9]|1[0-2])$/, 'invalid_format')
    .optional(),
  card_exp_year: z
    .string()
    .regex(/^\d{2}(\d{2})?$/, 'invalid_format')
    .optional(),
  card_code: digits(3, 4).optional(),
});

/** Accepts a CardDetails instance or plain fields; always yields a CardDetails (masked when printed). */
export const cardDetails = z.union([
  z.instanceof(CardDetails),
  cardDetailsFields.transform((f) => new CardDetails(f)),
]);

// A hash of a card field (a digest, hex or base64): a kilobyte is far more than any takes.
const hashed = z.string().min(1).max(1_024);
const hashedFields = z.object({
  hashed_card_number: hashed.optional(),
  hashed_card_exp_date: hashed.optional(),
  hashed_name_on_card: hashed.optional(),
  hashed_card_code: hashed.optional(),
});

export const hashedCardDetails = z.union([
  z.instanceof(HashedCardDetails),
  hashedFields
    .refine((f) => f.hashed_card_number !== undefined, {
      message: 'not_null',
      path: ['hashed_card_number'],
    })
    .meta({ required: ['hashed_card_number'] })
    .transform((f) => new HashedCardDetails(f)),
]);

export const tokenizedCard = z.looseObject({ token: z.string().min(1) });

export const cardInfoRequest = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('card_details'), card_details: cardDetails }),
  z.looseObject({ type: z.literal('hashed_card_details'), hashed_card_details: hashedCardDetails }),
  z.looseObject({ type: z.literal('tokenized_card'), tokenized_card: tokenizedCard }),
]);
export type CardInfoRequest = z.infer<typeof cardInfoRequest>;

export const recurringTokenRef = z.looseObject({
  token: z.string().min(1),
  /** `client` selects the customer-initiated scheme with 3-D Secure. */
  initiated_by: z.enum(['client', 'merchant']).optional(),
});

export const fpsInfo = z.looseObject({ money_purpose: z.string().min(1).max(210).optional() });

export const accountInfo = z.looseObject({
  payment_system: z.literal('fps_info_verification'),
  fps_info_verification: z.looseObject({
    phone_number: z.string().regex(/^\+?\d{10,15}$/, 'invalid_format'),
    bank_identifier: z.string().min(1),
  }),
});

const cardVariant = z.looseObject({ type: z.literal('card_info'), card_info: cardInfoRequest });
const recurringVariant = z.looseObject({
  type: z.literal('recurring_token_info'),
  recurring_token_info: recurringTokenRef,
});

export const paymentInfoRequest = z.preprocess(
  normalizeInstrument,
  z.discriminatedUnion('type', [
    cardVariant,
    z.looseObject({ type: z.literal('fps_info'), fps_info: fpsInfo.optional() }),
    z.looseObject({ type: z.literal('faster_payment_system_binding') }),
    recurringVariant,
  ]),
);
export type PaymentInfoRequest = z.infer<typeof paymentInfoRequest>;

export const payoutInfoRequest = z.preprocess(
  normalizeInstrument,
  z.discriminatedUnion('type', [
    cardVariant,
    recurringVariant,
    z.looseObject({ type: z.literal('fps_info'), fps_info: fpsInfo.optional() }),
    z.looseObject({ type: z.literal('account_info'), account_info: accountInfo }),
  ]),
);
export type PayoutInfoRequest = z.infer<typeof payoutInfoRequest>;

/** Instrument as echoed in responses: card data comes back as BIN / last 4 only. */
export const instrumentOut = z.preprocess(
  normalizeInstrument,
  z.looseObject({
    type: z.string(),
    card_info: z
      .looseObject({
        type: z.string().optional(),
        card_last4: z.string().optional(),
        card_bin: z.string().optional(),
        card_network: z.string().optional(),
        country_code_alpha3: z.string().optional(),
      })
      .optional(),
    fps_info: fpsInfo.optional(),
    recurring_token_info: z
      .looseObject({ token: z.string().optional(), initiated_by: z.string().optional() })
      .optional(),
    account_info: z.looseObject({}).optional(),
  }),
);
export type InstrumentOut = z.infer<typeof instrumentOut>;
