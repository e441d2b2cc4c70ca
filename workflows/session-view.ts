/**
 * The session as callers see it, read from the state a session carries (pure: the workflow's query uses
 * it, and the client reads a closed run's result with it, without replaying the run).
 */
import type { SessionPhase } from '../common/kinds';
import type { SessionState } from '../common/session-input';
import type { SessionView } from '../common/views';
import { latestPayment, operationsOf, totalsOf } from '../common/snapshot';

/** The phase a caller sees: final once final; needs_attention while paysaga keeps trying. */
export function phaseOfState(st: SessionState): SessionPhase {
  if (st.final) return st.final.phase;
  return st.attention ? 'needs_attention' : st.providerPhase;
}

export function sessionViewOf(st: SessionState): SessionView {
  const phase = phaseOfState(st);
  const payment = latestPayment(st.snapshot);
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
    ...(st.reason && phase !== 'succeeded' ? { reason: st.reason } : {}),
    ...(st.attention ? { attention: { ...st.attention } } : {}),
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
    refunds: st.refunds.map(({ knownBefore: _known, refusal: _refusal, extraInfo: _extra, ...r }) => ({
      ...r,
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
