/**
 * The session as callers see it, read from the state a session carries (pure: the workflow's query uses
 * it, and the client reads a closed run's result with it, without replaying the run).
 */
import type { SessionPhase } from './kinds';
import type { SessionState, PayoutOrder } from './session-input';
import type { PayoutView, SessionView } from './views';
import { paymentOf, operationsOf, totalsOf } from './snapshot';
import { isFinalPayout, payoutOf, payoutReason, payoutStatus } from './payouts';
import { readAttentionState, readEndReason, refundRefusal } from './legacy-reasons';

/** The phase a caller sees: final once final; needs_attention while paysaga keeps trying. */
export function phaseOfState(st: SessionState): SessionPhase {
  if (st.final) return st.final.phase;
  return st.attention ? 'needs_attention' : st.providerPhase;
}

export function sessionViewOf(st: SessionState): SessionView {
  const phase = phaseOfState(st);
  const payment = paymentOf(st.snapshot);
  const userAction = !st.final && st.providerPhase === 'awaiting_payer' ? payment?.user_action : undefined;
  const recurringToken = payment?.recurring_token_info?.token;
  const finalize = st.finalizeAmount;
  const { approval, finalization, polling } = st.settings;
  return {
    sessionId: st.sessionId,
    kind: st.kind,
    reference: st.reference,
    phase,
    final: st.final !== undefined,
    // A run or record from before structured reasons carries strings: read here (common/legacy-reasons.ts).
    ...(st.reason && phase !== 'succeeded' ? { reason: readEndReason(st.reason)! } : {}),
    ...(st.attention ? { attention: readAttentionState(st.attention)! } : {}),
    request: {
      ...(st.request.money ? { money: st.request.money } : {}),
      ...(st.request.backUrl ? { backUrl: st.request.backUrl } : {}),
      ...(st.request.submerchantId ? { submerchantId: st.request.submerchantId } : {}),
      ...(st.request.projectId ? { projectId: st.request.projectId } : {}),
      approval: approval.mode,
      finalization: finalization.mode,
      webhooks: polling.webhooks,
    },
    ...(st.request.money ? { money: st.request.money } : {}),
    totals: totalsOf(st.snapshot),
    operations: operationsOf(st.snapshot).map((o) =>
      o.kind === 'payment' && finalize !== undefined && o.status === 'successful'
        ? { ...o, captured: finalize }
        : o,
    ),
    ...(st.kind === 'payout' ? { payouts: payoutViewsOf(st) } : {}),
    refunds: st.refunds.map(({ knownBefore: _known, refusal: _refusal, extraInfo: _extra, ...r }) => ({
      ...r,
      ...(r.reason ? { reason: readEndReason(r.reason, refundRefusal)! } : {}),
    })),
    ...(st.snapshot ? { providerStatus: st.snapshot.transaction_status, lastSnapshot: st.snapshot } : {}),
    ...(userAction ? { userAction } : {}),
    ...(st.publicToken ? { publicToken: st.publicToken } : {}),
    ...(recurringToken ? { recurringToken } : {}),
    events: [...st.events],
    version: st.version,
    createdAt: st.createdAt,
    ...(st.final ? { finalAt: st.final.at } : {}),
  };
}

/** Each payout of a payout session: its own list, or the session's one payout (its reference the session's). */
function payoutViewsOf(st: SessionState): PayoutView[] {
  const money = st.request.money;
  const orders: PayoutOrder[] =
    st.payouts ?? (money ? [{ reference: st.reference, money, addedAt: st.createdAt, first: true }] : []);
  return orders.map((o) => {
    const p = payoutOf(o, st.snapshot);
    let status = payoutStatus(o, st.snapshot);
    let reason = payoutReason(o, st.snapshot);
    // A session that ended before this payout could start (never started, refused): it ends with it.
    if (st.final && !isFinalPayout(status)) {
      status = st.final.phase === 'canceled' ? 'canceled' : 'failed';
      reason = st.final.reason;
    }
    return {
      reference: o.reference,
      amount: o.money.amount,
      currency: o.money.currency,
      status,
      final: isFinalPayout(status),
      ...(p ? { payoutId: p.id, providerStatus: p.transaction_status } : {}),
      ...(reason ? { reason: readEndReason(reason)! } : {}),
      addedAt: o.addedAt,
    };
  });
}
