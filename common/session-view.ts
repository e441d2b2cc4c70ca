/**
 * The session as callers see it, read from the state a session carries (pure: the workflow's query uses
 * it, and the client reads a closed run's result with it, without replaying the run).
 */
import type { SessionPhase } from './kinds';
import type { SessionState, PayoutOrder } from './session-input';
import type { PayoutView, SessionView } from './views';
import { operationOf, paymentOf, operationsOf, totalsOf } from './snapshot';
import { isFinalPayout, payoutOf, payoutReason, payoutStatus } from './payouts';

/** The session waits for the payer, or for a decision the partner makes by hand. */
function waitsForSomeone(state: SessionState): boolean {
  const { approval, finalization } = state.settings;
  const phase = state.providerPhase;
  if (phase === 'awaiting_payer') return true;
  if (phase === 'awaiting_approval') return approval.mode === 'manual';
  return phase === 'awaiting_finalization' && finalization.mode === 'manual';
}

/**
 * Progress someone can act on: a result, attention, a wait for the payer or a person (a widget ready for
 * its payer included). What a creating request waits for before it answers.
 */
export function actionable(state: SessionState): boolean {
  return (
    state.final !== undefined ||
    state.attention !== undefined ||
    waitsForSomeone(state) ||
    (state.publicToken !== undefined && !operationOf(state.snapshot))
  );
}

/** The phase a caller sees: final once final; needs_attention while paysaga keeps trying. */
export function phaseOfState(state: SessionState): SessionPhase {
  if (state.final) return state.final.phase;
  return state.attention ? 'needs_attention' : state.providerPhase;
}

export function sessionViewOf(state: SessionState): SessionView {
  const phase = phaseOfState(state);
  const payment = paymentOf(state.snapshot);
  const userAction =
    !state.final && state.providerPhase === 'awaiting_payer' ? payment?.user_action : undefined;
  const recurringToken = payment?.recurring_token_info?.token;
  const finalize = state.finalizeAmount;
  const { approval, finalization, polling } = state.settings;
  return {
    sessionId: state.sessionId,
    kind: state.kind,
    reference: state.reference,
    phase,
    final: state.final !== undefined,
    ...(state.reason && phase !== 'succeeded' ? { reason: state.reason } : {}),
    ...(state.attention ? { attention: state.attention } : {}),
    request: {
      ...(state.request.money ? { money: state.request.money } : {}),
      ...(state.request.backUrl ? { backUrl: state.request.backUrl } : {}),
      ...(state.request.submerchantId ? { submerchantId: state.request.submerchantId } : {}),
      ...(state.request.projectId ? { projectId: state.request.projectId } : {}),
      approval: approval.mode,
      finalization: finalization.mode,
      webhooks: polling.webhooks,
    },
    ...(state.request.money ? { money: state.request.money } : {}),
    totals: totalsOf(state.snapshot),
    operations: operationsOf(state.snapshot).map((o) =>
      o.kind === 'payment' && finalize !== undefined && o.status === 'successful'
        ? { ...o, captured: finalize }
        : o,
    ),
    ...(state.kind === 'payout' ? { payouts: payoutViewsOf(state) } : {}),
    refunds: state.refunds.map(({ knownBefore: _known, refusal: _refusal, extraInfo: _extra, ...r }) => ({
      ...r,
      ...(r.reason ? { reason: r.reason } : {}),
    })),
    ...(state.snapshot
      ? { providerStatus: state.snapshot.transaction_status, lastSnapshot: state.snapshot }
      : {}),
    ...(userAction ? { userAction } : {}),
    ...(state.publicToken ? { publicToken: state.publicToken } : {}),
    ...(recurringToken ? { recurringToken } : {}),
    events: [...state.events],
    version: state.version,
    createdAt: state.createdAt,
    ...(state.final ? { finalAt: state.final.at } : {}),
  };
}

/** Each payout of a payout session: its own list, or the session's one payout (its reference the session's). */
function payoutViewsOf(state: SessionState): PayoutView[] {
  const money = state.request.money;
  const orders: PayoutOrder[] =
    state.payouts ??
    (money ? [{ reference: state.reference, money, addedAt: state.createdAt, first: true }] : []);
  return orders.map((o) => {
    const p = payoutOf(o, state.snapshot);
    let status = payoutStatus(o, state.snapshot);
    let reason = payoutReason(o, state.snapshot);
    // A session that ended before this payout could start (never started, refused): it ends with it.
    if (state.final && !isFinalPayout(status)) {
      status = state.final.phase === 'canceled' ? 'canceled' : 'failed';
      reason = state.final.reason;
    }
    return {
      reference: o.reference,
      amount: o.money.amount,
      currency: o.money.currency,
      status,
      final: isFinalPayout(status),
      ...(p ? { payoutId: p.id, providerStatus: p.transaction_status } : {}),
      ...(reason ? { reason: reason } : {}),
      addedAt: o.addedAt,
    };
  });
}
