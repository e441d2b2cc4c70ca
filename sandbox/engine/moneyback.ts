import { timestamp } from '../clock';
import { randomDigits } from '../ids';
import { invalid } from '../errors';
import type { Money, PaymentRecord, RefundRecord, SessionRecord } from '../model';
import type { FlowContext } from './context';

/*
 * Refunds (partner) and chargebacks (service) of a successful payment. Together, and counting refunds
 * still in progress, they never exceed what was captured: several partial refunds are fine, a double one is not.
 */

function refundable(p: PaymentRecord): number {
  return p.captured - p.moneyback.reduce((sum, r) => sum + r.sum.sum, 0);
}

function target(session: SessionRecord): PaymentRecord {
  const p = session.payments.find((x) => x.status === 'successful' && x.captured > 0);
  if (!p) throw invalid('session_id', 'not_refundable');
  return p;
}

/** Amount of a new refund or chargeback: the rest of the payment when the request names none. */
function amountOf(p: PaymentRecord, sum: Money | undefined): number {
  const left = refundable(p);
  if (sum && sum.currency_code !== p.sum.currency_code)
    throw invalid('sum_info.currency_code', 'invalid_value');
  if (!sum) {
    if (left <= 0) throw invalid('session_id', 'fully_refunded');
    return left;
  }
  if (sum.sum > left) throw invalid('sum_info.sum', 'exceeds_refundable_amount');
  return sum.sum;
}

export function refund(
  ctx: FlowContext,
  session: SessionRecord,
  sum: Money | undefined,
  extraInfo: unknown,
): RefundRecord {
  const p = target(session);
  const amount = amountOf(p, sum);
  const record: RefundRecord = {
    id: ctx.state.ids.take('rf'),
    status: 'ongoing',
    chargeback: false,
    createdAt: timestamp(),
    sum: { sum: amount, currency_code: p.sum.currency_code },
    ...(extraInfo !== undefined ? { extraInfo } : {}),
  };
  p.moneyback.push(record);
  ctx.touch(session);
  ctx.later({ kind: 'refund', operationId: p.id, refundId: record.id });
  return record;
}

/** One step after the partner's refund: the money goes back (jobs.ts). */
export function completeRefund(ctx: FlowContext, p: PaymentRecord, refundId: string): void {
  const record = p.moneyback.find((r) => r.id === refundId);
  if (!record || record.status !== 'ongoing') return;
  const session = ctx.sessionOf(p);
  ctx.move(p, 'refund', record.sum.sum, record.id);
  record.status = 'completed';
  record.completedAt = timestamp();
  record.transactionInfo = { retrieval_ref_number: randomDigits(12) };
  ctx.touch(session);
  ctx.emit(session, 'checkout_refunded');
}

/** Started by the service (the payer's bank), not by the partner: done at once, status repaid. */
export function chargeback(ctx: FlowContext, session: SessionRecord, sum: Money | undefined): RefundRecord {
  const p = target(session);
  const amount = amountOf(p, sum);
  const now = timestamp();
  const record: RefundRecord = {
    id: ctx.state.ids.take('rf'),
    status: 'repaid',
    chargeback: true,
    createdAt: now,
    completedAt: now,
    sum: { sum: amount, currency_code: p.sum.currency_code },
    transactionInfo: { retrieval_ref_number: randomDigits(12) },
  };
  p.moneyback.push(record);
  ctx.move(p, 'chargeback', amount, record.id);
  ctx.touch(session);
  ctx.emit(session, 'checkout_refunded');
  return record;
}
