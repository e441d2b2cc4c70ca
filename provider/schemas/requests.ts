import { z } from 'zod';
import { extraInfo, participantInfo, paymentSettings, sessionId, sumInfo, userInfo } from './common';
import { hashedCardDetails, payoutInfoRequest, paymentInfoRequest } from './instruments';

const sessionRef = { session_id: sessionId };

export const initiateRequest = z.looseObject({
  payment_info: paymentInfoRequest.optional(),
  payout_info: payoutInfoRequest.optional(),
  sum_info: sumInfo.optional(),
  participant_info: participantInfo.optional(),
  user_info: userInfo.optional(),
  payment_settings: paymentSettings.optional(),
  extra_info: extraInfo.optional(),
});

export const initCheckoutRequest = z.looseObject({
  payment_info: paymentInfoRequest,
  sum_info: sumInfo,
  user_info: userInfo,
  participant_info: participantInfo.optional(),
  payment_settings: paymentSettings.optional(),
  extra_info: extraInfo.optional(),
});

export const initTransferRequest = z.looseObject({
  payout_info: payoutInfoRequest,
  sum_info: sumInfo,
  participant_info: participantInfo.optional(),
  user_info: userInfo.optional(),
  extra_info: extraInfo.optional(),
});

/** Fields left out here must have been given at initiate: the sandbox (and service) check that. */
export const startCheckoutRequest = z.looseObject({
  ...sessionRef,
  payment_info: paymentInfoRequest.optional(),
  sum_info: sumInfo.optional(),
  user_info: userInfo.optional(),
  participant_info: participantInfo.optional(),
  payment_settings: paymentSettings.optional(),
  extra_info: extraInfo.optional(),
});

export const startTransferRequest = z.looseObject({
  ...sessionRef,
  payout_info: payoutInfoRequest.optional(),
  sum_info: sumInfo.optional(),
  participant_info: participantInfo.optional(),
  user_info: userInfo.optional(),
  extra_info: extraInfo.optional(),
});

export const sessionOnlyRequest = z.looseObject(sessionRef);

export const finalizeRequest = z.looseObject({ ...sessionRef, sum_info: sumInfo.optional() });

export const refundRequest = z.looseObject({
  ...sessionRef,
  sum_info: sumInfo.optional(),
  extra_info: extraInfo.optional(),
});

export const cardTokenizeConfig = z.looseObject({
  allow_tokenization: z.boolean(),
  lang: z.string().min(2).max(5).optional(),
});

export const paymentFormConfig = z.looseObject({
  session_id: sessionId,
  show_autopay_option: z.boolean().optional(),
  lang: z.string().min(2).max(5).optional(),
});

export const publicTokenRequest = z
  .looseObject({
    card_tokenize: cardTokenizeConfig.optional(),
    payment_form_config: paymentFormConfig.optional(),
    // The FPS page's fields are not shown by the spec: paysaga and its sandbox use the session and
    // the page's language, as for the payment form.
    fps_widget: z
      .looseObject({ session_id: sessionId.optional(), lang: z.string().min(2).max(5).optional() })
      .optional(),
  })
  .refine((r) => r.card_tokenize || r.payment_form_config || r.fps_widget, {
    message: 'not_null',
    path: ['card_tokenize'],
  })
  .meta({
    anyOf: [
      { required: ['card_tokenize'] },
      { required: ['payment_form_config'] },
      { required: ['fps_widget'] },
    ],
  });

const tokenRef = z.looseObject({ token: z.string().min(1) });

// Titles name each alternative in an OpenAPI document, so that generated clients name its models once.
export const publicTokenStateRequest = z.discriminatedUnion('type', [
  z
    .looseObject({
      type: z.literal('card_info'),
      card_info: z.looseObject({
        type: z.literal('hashed_card_details'),
        hashed_card_details: hashedCardDetails,
      }),
    })
    .meta({ title: 'CardInfoTokenState' }),
  /** The shape of `public_token` is not shown in the spec: `{ token }` here, a bare string accepted too. */
  z
    .looseObject({
      type: z.literal('public_token'),
      public_token: z.union([
        tokenRef,
        z
          .string()
          .min(1)
          .transform((token) => ({ token })),
      ]),
    })
    .meta({ title: 'PublicTokenState' }),
  z
    .looseObject({ type: z.literal('recurring_token'), recurring_token: tokenRef })
    .meta({ title: 'RecurringTokenState' }),
]);

export const recurringTokenDisableRequest = z.looseObject({ recurring_token_info: tokenRef });

/** The spec sends an empty object: anything else is a mistake worth naming. */
export const sbpBanksRequest = z.strictObject({});

export const identityCheckRequest = z.looseObject({
  payout_info: z.looseObject({
    type: z.literal('account_info'),
    account_info: z.looseObject({
      payment_system: z.literal('fps_info_verification'),
      fps_info_verification: z.looseObject({
        phone_number: z.string().regex(/^\+?\d{10,15}$/, 'invalid_format'),
        bank_identifier: z.string().min(1),
      }),
    }),
  }),
  participant_info: z.looseObject({
    payee_info: participantInfo.shape.payee_info.unwrap(),
    payer_info: participantInfo.shape.payer_info,
  }),
});

export type InitiateRequest = z.input<typeof initiateRequest>;
export type InitCheckoutRequest = z.input<typeof initCheckoutRequest>;
export type InitTransferRequest = z.input<typeof initTransferRequest>;
export type StartCheckoutRequest = z.input<typeof startCheckoutRequest>;
export type StartTransferRequest = z.input<typeof startTransferRequest>;
export type SessionOnlyRequest = z.input<typeof sessionOnlyRequest>;
export type FinalizeRequest = z.input<typeof finalizeRequest>;
export type RefundRequest = z.input<typeof refundRequest>;
export type PublicTokenRequest = z.input<typeof publicTokenRequest>;
export type PublicTokenStateRequest = z.input<typeof publicTokenStateRequest>;
export type RecurringTokenDisableRequest = z.input<typeof recurringTokenDisableRequest>;
export type IdentityCheckRequest = z.input<typeof identityCheckRequest>;
