/**
 * Pure reading of provider snapshots (session_info from webhooks, calls or polls): which is newer, what
 * phase it means, what moved, and whether it matches what was asked. Deterministic: no I/O, no clock.
 */
import type { SessionPhase } from './kinds';
import type { Money, OperationView, Totals } from './views';
import type { Moneyback, Payment, Payout, SessionInfo } from '../provider/schemas';

const FINAL_OP = new Set(['successful', 'unsuccessful']);
const FINAL_SESSION = new Set(['completed', 'canceled']);
const DONE_REFUND = new Set(['completed', 'repaid']);

/** How far a snapshot has come: sessions and operations only move forward. */
function progress(s: SessionInfo): number[] {
  const sessionRank = FINAL_SESSION.has(s.transaction_status)
    ? 3
    : s.transaction_status === 'created'
      ? 0
      : 1;
  // pending and ongoing alternate (approved -> ongoing -> held, pending finalize): only final ranks higher.
  const opRank = (status: string) => (FINAL_OP.has(status) ? 1 : 0);
  const ops = [...(s.payments ?? []), ...(s.payouts ?? [])];
  const refunds = moneybackOf(s);
  const refundRank = refunds.reduce((n, r) => n + (r.transaction_status === 'ongoing' ? 1 : 2), 0);
  // A new operation (an FPS payment renewed after qr_expired) is progress even when the session reopens.
  return [
    ops.length,
    sessionRank,
    ops.reduce((n, o) => n + opRank(o.transaction_status), 0),
    refunds.length,
    refundRank,
  ];
}

function compareArrays(a: number[], b: number[]): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return (a[i] ?? 0) - (b[i] ?? 0);
  return 0;
}

/**
 * Whether `next` should replace `current`. The provider's `updated_at` decides when both carry it;
 * a final state is never replaced by a non-final one, and a duplicate changes nothing.
 */
export function isNewer(next: SessionInfo, current: SessionInfo | undefined): boolean {
  if (!current) return true;
  if (next.id !== current.id) return false;
  const p = compareArrays(progress(next), progress(current));
  if (FINAL_SESSION.has(current.transaction_status) && p < 0) return false;
  if (next.updated_at && current.updated_at && next.updated_at !== current.updated_at) {
    return next.updated_at > current.updated_at && p >= 0;
  }
  return p > 0;
}

/**
 * The payment the session is about: the latest one (an FPS payment renewed after its QR expired is a new
 * payment), unless one has succeeded: the provider may add payments after it (a later split), which are
 * listed in `operations` on their own and never taken for the session's result or amount.
 */
export function paymentOf(s: SessionInfo | undefined): Payment | undefined {
  const payments = s?.payments ?? [];
  return payments.find((p) => p.transaction_status === 'successful') ?? payments.at(-1);
}

export function operationOf(s: SessionInfo | undefined): Payment | Payout | undefined {
  return paymentOf(s) ?? s?.payouts?.at(-1);
}

export function moneybackOf(s: SessionInfo | undefined): Moneyback[] {
  return (s?.payments ?? []).flatMap((p) => p.moneyback ?? []);
}

/** The phase of a payment or payout session, as its latest operation and the session show it. */
export function phaseOf(s: SessionInfo | undefined): SessionPhase {
  const op = operationOf(s);
  if (!s || !op) return s?.transaction_status === 'canceled' ? 'canceled' : 'starting';
  if (op.transaction_status === 'successful') return 'succeeded';
  // The partner's own cancel (manual decision, deadline) ends the operation unsuccessful too.
  if (op.transaction_status === 'unsuccessful')
    return op.error?.error_code === 'canceled_by_partner' ? 'canceled' : 'failed';
  if (s.transaction_status === 'canceled') return 'canceled';
  // A decision is due only once the provider asks for it (next_step); a pending operation without
  // one is still being prepared by the provider (approving it then is refused).
  if (s.next_step === 'finalize') return 'awaiting_finalization';
  if (s.next_step === 'approve') return 'awaiting_approval';
  if (op.transaction_status === 'pending') return 'processing';
  if ('user_action' in op && op.user_action) return 'awaiting_payer';
  return 'processing';
}

/**
 * The provider's phase contradicts a session's final result: another final phase, or an operation still
 * open (one that began after the session ended without any: money the provider may hold for a session
 * paysaga no longer follows). A final result follows a final operation, so only such a late one is open.
 * Still no operation (`starting`) contradicts nothing.
 */
export function contradictsResult(ended: SessionPhase, now: SessionPhase): boolean {
  return now !== ended && now !== 'starting';
}

/** The operation is past the approval step (approved, or the provider approved it by itself). */
export function pastApproval(s: SessionInfo | undefined): boolean {
  const op = operationOf(s);
  return !!op && (op.transaction_status !== 'pending' || s?.next_step === 'finalize');
}

/** The latest payment's QR expired (an FPS payment the saga may start again). */
export function qrExpired(s: SessionInfo | undefined): boolean {
  const p = paymentOf(s);
  return p?.transaction_status === 'unsuccessful' && p.error?.error_code === 'qr_expired';
}

interface FeeInfo {
  fee?: { merchant_fee?: { sum: number } };
  net?: { sum: number };
  gross?: { sum: number };
}

/** fee_info in either of the spec's forms: `fee.merchant_fee`, or `gross` - `net`. */
function feeOf(f: FeeInfo | undefined): number | undefined {
  if (f?.fee?.merchant_fee) return f.fee.merchant_fee.sum;
  if (f?.gross && f.net) return f.gross.sum - f.net.sum;
  return undefined;
}

interface Transaction {
  id: string;
  transaction_status: string;
  sum_info?: { sum: number; currency_code: string };
  fee_info?: FeeInfo;
  error?: { error_code: string };
}

function opView(kind: OperationView['kind'], o: Transaction): OperationView {
  const fee = feeOf(o.fee_info);
  return {
    id: o.id,
    kind,
    status: o.transaction_status,
    ...(o.sum_info ? { amount: o.sum_info.sum, currency: o.sum_info.currency_code.toLowerCase() } : {}),
    ...(fee !== undefined ? { fee } : {}),
    ...(o.error ? { error: o.error.error_code } : {}),
  };
}

/** Every operation of the session: payments with their refunds and chargebacks, payouts. */
export function operationsOf(s: SessionInfo | undefined): OperationView[] {
  if (!s) return [];
  return [
    ...(s.payments ?? []).flatMap((p) => [
      opView('payment', p),
      ...(p.moneyback ?? []).map((m) => opView(m.chargeback ? 'chargeback' : 'refund', m)),
    ]),
    ...(s.payouts ?? []).map((p) => opView('payout', p)),
  ];
}

const sumOf = (xs: { sum_info?: { sum: number } }[]) => xs.reduce((n, x) => n + (x.sum_info?.sum ?? 0), 0);

/** What moved, by the provider's snapshot: held, charged, returned and paid out. */
export function totalsOf(s: SessionInfo | undefined): Totals {
  const payments = s?.payments ?? [];
  const held = payments.filter((p) => p.transaction_status === 'pending' && s?.next_step === 'finalize');
  const captured = sumOf(payments.filter((p) => p.transaction_status === 'successful'));
  const done = moneybackOf(s).filter((m) => DONE_REFUND.has(m.transaction_status));
  const refunded = sumOf(done.filter((m) => !m.chargeback));
  const chargedBack = sumOf(done.filter((m) => m.chargeback));
  const paidOut = sumOf((s?.payouts ?? []).filter((p) => p.transaction_status === 'successful'));
  const currency = operationOf(s)?.sum_info?.currency_code.toLowerCase();
  return {
    ...(currency ? { currency } : {}),
    held: sumOf(held),
    captured,
    refunded,
    chargedBack,
    paidOut,
    net: payments.length > 0 ? captured - refunded - chargedBack : paidOut,
  };
}

/**
 * Amount and currency of the operation against what was asked. A held payment that paysaga finalized in
 * part must show exactly the finalized amount once charged (more is an over-capture). Checked on every
 * snapshot, final ones included.
 */
export function amountMismatch(
  s: SessionInfo | undefined,
  money: Money | undefined,
  finalizeAmount?: number,
): string | undefined {
  const op = operationOf(s);
  if (!money || !op?.sum_info) return undefined;
  const { sum, currency_code } = op.sum_info;
  if (currency_code.toLowerCase() !== money.currency)
    return `currency ${currency_code} differs from ${money.currency}`;
  const charged = op.transaction_status === 'successful' && finalizeAmount !== undefined;
  const expected = charged ? finalizeAmount : money.amount;
  if (sum !== expected)
    return charged
      ? `charged ${sum} after a finalize of ${finalizeAmount}`
      : `amount ${sum} differs from ${money.amount}`;
  return undefined;
}

export function failureReason(s: SessionInfo | undefined): string | undefined {
  const op = operationOf(s);
  return op?.error?.error_code ?? s?.error?.error_code;
}
