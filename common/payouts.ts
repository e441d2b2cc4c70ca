/**
 * Several payouts in one session (spec: "one session may hold several payouts"). The partner names each
 * payout with a reference of its own inside the session; paysaga sends them one at a time (the provider
 * takes another start/transfer only once the one before it is decided, and approve and cancel name the
 * session, not the payout) and reads each one's status, amount and result from the provider's snapshot.
 * Pure and deterministic: safe for workflow code.
 */
import type { PayoutStatus, SessionPhase } from './kinds';
import type { Payout, SessionInfo } from '../provider/schemas';
import { reason, reasonText, refusalReason, type EndReason } from './reasons';
import type { PayoutOrder } from './session-input';

/** At most this many payouts in one session (its state, events and history stay bounded). */
export const PAYOUT_LIMITS = { perSession: 20 } as const;

const FINAL_STATUSES: readonly PayoutStatus[] = ['succeeded', 'failed', 'canceled'];
export const isFinalPayout = (status: PayoutStatus): boolean => FINAL_STATUSES.includes(status);

/** The provider's payout record of an order, once it exists. */
export function payoutOf(order: PayoutOrder, s: SessionInfo | undefined): Payout | undefined {
  const payouts = s?.payouts ?? [];
  if (order.payoutId) return payouts.find((p) => p.id === order.payoutId);
  if (order.first) return payouts[0];
  // Sent, answer not heard yet (a webhook may come first): payouts go one at a time, so it is the new one.
  const id = order.knownBefore ? newPayoutId(s, order.knownBefore) : undefined;
  return id ? payouts.find((p) => p.id === id) : undefined;
}

/** The payout a start/transfer made: the first record that was not there before it was sent. */
export function newPayoutId(s: SessionInfo | undefined, knownBefore: readonly string[]): string | undefined {
  return (s?.payouts ?? []).find((p) => !knownBefore.includes(p.id))?.id;
}

export function payoutStatus(order: PayoutOrder, s: SessionInfo | undefined): PayoutStatus {
  if (order.refused) return 'failed';
  const p = payoutOf(order, s);
  if (!p) return order.knownBefore || order.first ? 'starting' : 'queued';
  if (p.transaction_status === 'successful') return 'succeeded';
  if (p.transaction_status === 'unsuccessful')
    return p.error?.error_code === 'canceled_by_partner' ? 'canceled' : 'failed';
  if (p.transaction_status === 'pending' && s?.next_step === 'approve') return 'awaiting_approval';
  return 'processing';
}

/** Why a payout ended other than successfully: paysaga's own reason, else the provider's error code. */
export function payoutReason(order: PayoutOrder, s: SessionInfo | undefined): EndReason | undefined {
  const status = payoutStatus(order, s);
  if (!isFinalPayout(status) || status === 'succeeded') return undefined;
  if (order.refused) return refusalReason('start_failed', order.refused);
  if (order.reason) return order.reason;
  const code = payoutOf(order, s)?.error?.error_code;
  return code === undefined ? undefined : reason('provider_error', undefined, { providerCode: code });
}

/**
 * The session's phase over all its payouts: while one is not final, that one's (a queued payout is
 * processing); once all are, succeeded if any paid out (the provider's session is then completed),
 * canceled if the partner or paysaga canceled every one, else failed.
 */
export function payoutsPhase(
  s: SessionInfo | undefined,
  orders: readonly PayoutOrder[],
  single: (s: SessionInfo | undefined) => SessionPhase,
): SessionPhase {
  const statuses = orders.map((o) => payoutStatus(o, s));
  if (statuses.includes('awaiting_approval')) return 'awaiting_approval';
  if (statuses.some((state) => !isFinalPayout(state)))
    return statuses.every((state) => state === 'queued' || state === 'starting') && !s?.payouts?.length
      ? single(s)
      : 'processing';
  if (statuses.includes('succeeded')) return 'succeeded';
  return statuses.every((state) => state === 'canceled') ? 'canceled' : 'failed';
}

/** Each started payout's amount and currency against what was asked for it (first difference found). */
export function payoutsMismatch(
  s: SessionInfo | undefined,
  orders: readonly PayoutOrder[],
): string | undefined {
  for (const order of orders) {
    const sum = payoutOf(order, s)?.sum_info;
    if (!sum) continue;
    if (sum.currency_code.toLowerCase() !== order.money.currency)
      return `payout ${order.reference}: currency ${sum.currency_code} differs from ${order.money.currency}`;
    if (sum.sum !== order.money.amount)
      return `payout ${order.reference}: amount ${sum.sum} differs from ${order.money.amount}`;
  }
  return undefined;
}

/** The session's reason when every payout ended and none paid out: each one's, in order. */
export function payoutsReason(
  s: SessionInfo | undefined,
  orders: readonly PayoutOrder[],
): EndReason | undefined {
  const reasons = orders
    .map((o) => [o.reference, payoutReason(o, s)] as const)
    .filter(([, why]) => why !== undefined)
    .map(([ref, why]) => `${ref}: ${reasonText(why!)}`);
  return reasons.length ? reason('payouts_unsuccessful', reasons.join('; ')) : undefined;
}

/** The payout a session works on now: the first one that is not final (started or queued). */
export function currentPayout(
  s: SessionInfo | undefined,
  orders: readonly PayoutOrder[],
): PayoutOrder | undefined {
  return orders.find((o) => !isFinalPayout(payoutStatus(o, s)));
}

/**
 * The next payout to send, once every payout before it is final: the first queued one, or one sent
 * whose answer a run that continued as new never heard (sent again under its key, after a look).
 */
export function nextQueued(
  s: SessionInfo | undefined,
  orders: readonly PayoutOrder[],
): PayoutOrder | undefined {
  const current = currentPayout(s, orders);
  if (!current || current.first) return undefined;
  const status = payoutStatus(current, s);
  return status === 'queued' || status === 'starting' ? current : undefined;
}

/** The payout being worked on has ended (the next one may be sent), or none was ever started. */
export function payoutEnded(s: SessionInfo | undefined, orders: readonly PayoutOrder[]): boolean {
  const current = currentPayout(s, orders);
  return !current || payoutStatus(current, s) === 'queued';
}

/** A repeat of the same payout (same reference) must ask for the same thing. */
export function samePayout(a: Pick<PayoutOrder, 'money' | 'body'>, b: Pick<PayoutOrder, 'money' | 'body'>) {
  return JSON.stringify([a.money, a.body]) === JSON.stringify([b.money, b.body]);
}
