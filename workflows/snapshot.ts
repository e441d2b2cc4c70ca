/**
 * Pure reading of provider snapshots (session_info from webhooks, calls or polls):
 * which is newer, what phase it means, and whether it matches what was asked.
 * Deterministic: no I/O, no clock.
 */
import type { Payment, Payout, SessionInfo } from '../provider/schemas';
import type { Money, OperationView, SessionPhase } from './types';

const FINAL_OP = new Set(['successful', 'unsuccessful']);
const FINAL_SESSION = new Set(['completed', 'canceled']);

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
  const refunds = (s.payments ?? []).flatMap((p) => p.moneyback ?? []);
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

export function latestPayment(s: SessionInfo | undefined): Payment | undefined {
  return s?.payments?.at(-1);
}

export function latestPayout(s: SessionInfo | undefined): Payout | undefined {
  return s?.payouts?.at(-1);
}

export function operationOf(s: SessionInfo | undefined): Payment | Payout | undefined {
  return latestPayment(s) ?? latestPayout(s);
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

interface FeeInfo {
  fee?: { merchant_fee?: { sum: number } };
  net?: { sum: number };
  gross?: { sum: number };
}

/** fee_info in either of the spec's forms: `fee.merchant_fee`, or `gross` − `net`. */
function feeOf(f: FeeInfo | undefined): number | undefined {
  if (f?.fee?.merchant_fee) return f.fee.merchant_fee.sum;
  if (f?.gross && f.net) return f.gross.sum - f.net.sum;
  return undefined;
}

export function operationsOf(s: SessionInfo | undefined): OperationView[] {
  if (!s) return [];
  const view = (
    kind: OperationView['kind'],
    o: {
      id: string;
      transaction_status: string;
      sum_info?: { sum: number; currency_code: string };
      fee_info?: FeeInfo;
      error?: { error_code: string };
    },
  ): OperationView => {
    const fee = feeOf(o.fee_info);
    return {
      id: o.id,
      kind,
      status: o.transaction_status,
      ...(o.sum_info ? { amount: o.sum_info.sum, currency: o.sum_info.currency_code } : {}),
      ...(fee !== undefined ? { fee } : {}),
      ...(o.error ? { error: o.error.error_code } : {}),
    };
  };
  return [
    ...(s.payments ?? []).flatMap((p) => [
      view('payment', p),
      ...(p.moneyback ?? []).map((m) => view(m.chargeback ? 'chargeback' : 'refund', m)),
    ]),
    ...(s.payouts ?? []).map((p) => view('payout', p)),
  ];
}

/**
 * Amount and currency of the operation against what was sent. A held payment may end with a
 * smaller, finalized amount, so `allowed` lists every amount the saga itself asked for.
 */
export function amountMismatch(
  s: SessionInfo | undefined,
  money: Money | undefined,
  allowed: number[] = [],
): string | undefined {
  const op = operationOf(s);
  if (!money || !op?.sum_info) return undefined;
  const { sum, currency_code } = op.sum_info;
  if (currency_code !== money.currency) return `currency ${currency_code} differs from ${money.currency}`;
  if (sum !== money.amount && !allowed.includes(sum)) return `amount ${sum} differs from ${money.amount}`;
  return undefined;
}

export function failureReason(s: SessionInfo | undefined): string | undefined {
  const op = operationOf(s);
  return op?.error?.error_code ?? s?.error?.error_code;
}
