import { z } from 'zod';
import { errorObject } from './common';
import { recurringTokenInfo, sessionInfo } from './session';

/** Every response: `status` and, on error, the error object as `error_info` or `error`. */
export const envelope = z.looseObject({
  status: z.enum(['ok', 'error']),
  error_info: errorObject.optional(),
  error: errorObject.optional(),
});

export const sessionResponse = z.looseObject({ status: z.literal('ok'), session_info: sessionInfo });

export const publicTokenResponse = z.looseObject({ status: z.literal('ok'), public_token: z.string() });

export const recurringTokenDisableResponse = z.looseObject({
  status: z.literal('ok'),
  recurring_token_info: recurringTokenInfo,
});

export const tokenInfo = z.looseObject({
  type: z.string().optional(),
  hashed_card_number: z.string().optional(),
  card_network: z.string().optional(),
  card_last4: z.string().optional(),
  token: z.string().optional(),
  token_active: z.boolean().optional(),
});

export const publicTokenStateResponse = z.looseObject({ status: z.literal('ok'), token_info: tokenInfo });

export const bank = z.looseObject({ id: z.string(), eng_name: z.string(), ru_name: z.string() });
export type Bank = z.infer<typeof bank>;

export const banksResponse = z.looseObject({ status: z.literal('ok'), banks: z.array(bank) });

export type SessionResponse = z.infer<typeof sessionResponse>;
export type PublicTokenResponse = z.infer<typeof publicTokenResponse>;
export type RecurringTokenDisableResponse = z.infer<typeof recurringTokenDisableResponse>;
export type PublicTokenStateResponse = z.infer<typeof publicTokenStateResponse>;
export type BanksResponse = z.infer<typeof banksResponse>;
