/**
 * The result: final only when the provider's operation is final
 * (docs/decisions/010-one-truth-final-is-final.md). Past the session deadline, paysaga cancels what can be
 * canceled; what it cannot cancel it reports (needs attention) and keeps following until the provider ends
 * it. `ended`: what ends this wait (one payout of several ends before its session does).
 */
import type { Session } from '../session';
import { reason } from '../../common/reasons';
import { operationOf } from '../../common/snapshot';
import { cancelable, cancelOwn } from './decisions';

export async function outcome(
  session: Session,
  deadline: number,
  ended = () => session.isFinal(),
): Promise<void> {
  if (await session.runtime.until(ended, deadline)) return;
  if (cancelable(session))
    await cancelOwn(session, reason('session_deadline', 'canceled when the session deadline passed'));
  if (!ended()) {
    const status = operationOf(session.state.snapshot)?.transaction_status ?? 'not started';
    session.journal.needsAttention(
      reason('session_deadline', `the provider's operation is still ${status}; following it until it ends`),
    );
  }
  await session.runtime.until(ended);
}
