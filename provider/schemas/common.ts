import { z } from 'zod';

// The parts every request and response shares.

/** Currency as the provider sends it (any case); normalized to lower case, as requests must carry it. */
export const currencyCode = z
  .string()
  .regex(/^[A-Za-z]{3}$/, 'invalid_format')
  .transform((c) => c.toLowerCase());

/** Amounts are integers in minor units. */
export const sumInfo = z.looseObject({
  sum: z.number().int().positive(),
  currency_code: currencyCode,
});

/** As seen in responses: a zero sum is possible there (e.g. FPS binding). */
export const sumInfoOut = z.looseObject({
  sum: z.number().int().nonnegative(),
  currency_code: currencyCode,
});

const nonBlank = z.string().min(1);

export const contactInfo = z.looseObject({
  email_address: nonBlank.optional(),
  phone_number: nonBlank.optional(),
});

export const userInfo = z.looseObject({
  user_id: nonBlank.optional(),
  contact_info: z.array(contactInfo).optional(),
  /** Test environment: `thief` / `loser` select failure scenarios. */
  // Blank (whitespace only) is refused as the provider does; a pattern, so the OpenAPI document says so.
  customer: z.looseObject({ reference: z.string().regex(/\S/, { error: 'not_blank' }) }).optional(),
});

export const payeeInfo = z.looseObject({
  full_name: nonBlank.optional(),
  given_name: nonBlank.optional(),
  family_name: nonBlank.optional(),
  patronymic: nonBlank.optional(),
});

export const participantInfo = z.looseObject({
  payee_info: payeeInfo.optional(),
  payer_info: z.looseObject({ ipv4_address: z.ipv4().optional() }).optional(),
});

export const paymentSettings = z.looseObject({
  back_url: z.url({ protocol: /^https?$/ }).optional(),
  allow_recurring: z.boolean().optional(),
});

export const feeInfo = z.looseObject({
  fee: z.looseObject({ merchant_fee: sumInfoOut.optional() }).optional(),
  net: sumInfoOut.optional(),
  gross: sumInfoOut.optional(),
});

export const transactionInfo = z.looseObject({
  retrieval_ref_number: z.string().optional(),
  authorization_code: z.string().optional(),
  fps_transaction_id: z.string().optional(),
});

export const errorObject = z.looseObject({
  error_code: z.string(),
  error_description: z.string().optional(),
});

export const extraInfo = z.unknown();

export const sessionId = z.string().min(1);

export type SumInfo = z.infer<typeof sumInfo>;
export type UserInfo = z.infer<typeof userInfo>;
export type ParticipantInfo = z.infer<typeof participantInfo>;
export type PaymentSettings = z.infer<typeof paymentSettings>;
export type ErrorObject = z.infer<typeof errorObject>;
