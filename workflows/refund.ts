/**
 * Refund of a successful payment, full or partial, as its own workflow under the session's id
 * (one lane per session). Several refunds run one after another; each caller reference is one refund.
 */
import type { Moneyback, SessionInfo } from '../provider/schemas';
import { closeSession, guarded } from './session-lifecycle';
import { provider, SessionRun } from './session-run';
import { latestPayment } from './snapshot';
import type { RefundInput, SessionPhase, SessionResult } from './types';

function refundPhase(m: Moneyback | undefined): SessionPhase {
  if (!m) return 'starting';
  if (m.transaction_status === 'completed' || m.transaction_status === 'repaid') return 'succeeded';
  return m.transaction_status === 'ongoing' ? 'processing' : 'failed';
}

export async function refundWorkflow(input: RefundInput): Promise<SessionResult> {
  let refundId: string | undefined;
  const find = (s: SessionInfo | undefined) => latestPayment(s)?.moneyback?.find((m) => m.id === refundId);
  const run = new SessionRun({
    sessionId: input.sessionId,
    kind: 'refund',
    reference: input.refundReference,
    settings: input.settings,
    ...(input.amount !== undefined && input.currency
      ? { money: { amount: input.amount, currency: input.currency } }
      : {}),
    phaseFn: (s) => refundPhase(find(s)),
  });
  await guarded(run, async () => {
    const money = run.opts.money;
    const snapshot = await provider.refund(input.sessionId, `refund:${input.refundReference}`, money);
    // The answer to this call (replayed as is for a repeated key) ends with the refund it made.
    refundId = latestPayment(snapshot)
      ?.moneyback?.filter((m) => !m.chargeback)
      .at(-1)?.id;
    if (!refundId) {
      run.end('failed', 'refund_not_recorded: the provider answered without a refund record');
      return;
    }
    // A webhook may have brought a newer state before this answer (e.g. after a resend with the same
    // key): then the answer is not applied, and the phase is read from what is known now.
    if (!run.apply(snapshot, 'call', 'transaction/refund')) run.setPhase(refundPhase(find(run.snapshot)));
    const deadline = Date.now() + input.settings.deadlines.sessionMs;
    while (!run.isFinal()) {
      const refund = find(run.snapshot);
      if (money && refund?.sum_info && refund.sum_info.sum !== money.amount) {
        run.end('failed', `amount_mismatch: refund of ${refund.sum_info.sum} instead of ${money.amount}`);
        break;
      }
      if (!(await run.waitForProgress(deadline)))
        run.end('failed', 'session_deadline: the refund did not complete in time');
    }
  });
  return closeSession(run);
}
