import { z } from 'zod';
import {
  errorObject,
  feeInfo,
  participantInfo,
  paymentSettings,
  sumInfoOut,
  transactionInfo,
  userInfo,
} from './common';
import { instrumentOut } from './instruments';

export const SESSION_STATUSES = ['created', 'active', 'ongoing', 'completed', 'canceled'] as const;
export const OPERATION_STATUSES = ['pending', 'ongoing', 'successful', 'unsuccessful'] as const;
export const REFUND_STATUSES = ['ongoing', 'completed', 'repaid'] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];
export type OperationStatus = (typeof OPERATION_STATUSES)[number];
export type RefundStatus = (typeof REFUND_STATUSES)[number];

/**
 * user_action in its table form. Input may use `redirect` for destination_info, `url`/`method`
 * for url_address/http_method and `img` for qr_image.
 */
export function normalizeUserAction(value: unknown): unknown {
  if (!value || typeof value !== 'object') return value;
  const v = { ...(value as Record<string, unknown>) };
  if (v.type === 'redirect') {
    v.type = 'destination_info';
    v.destination_info ??= v.redirect;
    delete v.redirect;
  }
  const dest = v.destination_info as Record<string, unknown> | undefined;
  if (dest && typeof dest === 'object') {
    const d = { ...dest };
    if (d.url_address === undefined && d.url !== undefined) d.url_address = d.url;
    if (d.http_method === undefined && d.method !== undefined) d.http_method = d.method;
    delete d.url;
    delete d.method;
    if (typeof d.http_method === 'string') d.http_method = d.http_method.toUpperCase();
    v.destination_info = d;
  }
  const qr = v.payment_qr as { qr_data?: Record<string, unknown> } | undefined;
  if (qr?.qr_data && typeof qr.qr_data === 'object') {
    const q = { ...qr.qr_data };
    if (q.qr_image === undefined && q.img !== undefined) q.qr_image = q.img;
    delete q.img;
    v.payment_qr = { ...qr, qr_data: q };
  }
  return v;
}

// A session as the provider shows it, and its parts.

/** Statuses are kept as strings: the provider may add values, and a parse must not fail on them. */
const status = z.string();
const timestamp = z.string();

export const userAction = z.preprocess(
  normalizeUserAction,
  z.looseObject({
    type: z.string(),
    destination_info: z
      .looseObject({
        url_address: z.string(),
        domain: z.string().optional(),
        http_method: z.enum(['GET', 'POST']).optional(),
        additional_params: z.record(z.string(), z.unknown()).optional(),
        extra_params: z.record(z.string(), z.unknown()).optional(),
      })
      .optional(),
    payment_qr: z
      .looseObject({
        qr_data: z.looseObject({ qr_content: z.string().optional(), qr_image: z.string().optional() }),
      })
      .optional(),
  }),
);

export const recurringTokenInfo = z.looseObject({
  token: z.string(),
  created_date: timestamp.optional(),
  completed_date: timestamp.optional(),
  token_active: z.boolean().optional(),
  type: z.string().optional(),
});

/**
 * The fields every transaction object (moneyback, payment, payout) opens with. Spread first: the keys of a
 * parsed object come out in the schema's order, so each object keeps the provider's order.
 */
const transactionHead = {
  id: z.string(),
  transaction_status: status,
  created_date: timestamp.optional(),
  completed_date: timestamp.optional(),
};

/** What a payment and a payout both open with: the transaction head, then who took part. */
const operationHead = {
  ...transactionHead,
  user_info: userInfo.partial().optional(),
  participant_info: participantInfo.optional(),
};

export const moneyback = z.looseObject({
  ...transactionHead,
  sum_info: sumInfoOut.optional(),
  chargeback: z.boolean().optional(),
  transaction_info: transactionInfo.optional(),
});

export const payment = z.looseObject({
  ...operationHead,
  payment_info: instrumentOut.optional(),
  sum_info: sumInfoOut.optional(),
  payment_settings: paymentSettings.optional(),
  extra_info: z.unknown().optional(),
  recurring_token_info: recurringTokenInfo.optional(),
  fee_info: feeInfo.optional(),
  transaction_info: transactionInfo.optional(),
  user_action: userAction.optional(),
  moneyback: z.array(moneyback).optional(),
  error: errorObject.optional(),
});

export const payout = z.looseObject({
  ...operationHead,
  payout_info: instrumentOut.optional(),
  sum_info: sumInfoOut.optional(),
  extra_info: z.unknown().optional(),
  fee_info: feeInfo.optional(),
  transaction_info: transactionInfo.optional(),
  error: errorObject.optional(),
});

export const sessionInfo = z.looseObject({
  id: z.string(),
  transaction_status: status,
  created_date: timestamp.optional(),
  updated_at: timestamp.optional(),
  next_step: z.string().optional(),
  payments: z.array(payment).optional(),
  payouts: z.array(payout).optional(),
  actions: z.record(z.string(), z.string()).optional(),
  transaction_info: transactionInfo.optional(),
  error: errorObject.optional(),
});
export type UserAction = z.infer<typeof userAction>;
export type RecurringTokenInfo = z.infer<typeof recurringTokenInfo>;
export type Moneyback = z.infer<typeof moneyback>;
export type Payment = z.infer<typeof payment>;
export type Payout = z.infer<typeof payout>;
export type SessionInfo = z.infer<typeof sessionInfo>;
