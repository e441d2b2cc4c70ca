/**
 * The result: final only when the provider's operation is final (DESIGN decision 10). Past the session
 * deadline, paysaga cancels what can be canceled; what it cannot cancel it reports (needs attention) and
 * keeps following until the provider ends it.
 */
import type { Session } from '../session';
import { operationOf } from '../../common/snapshot';
import { cancelable, cancelOwn } from './decisions';

export async function outcome(s: Session, deadline: number): Promise<void> {
  if (await s.until(() => s.isFinal(), deadline)) return;
  if (cancelable(s)) await cancelOwn(s, 'session_deadline: canceled when the session deadline passed');
  if (!s.isFinal())
    s.needsAttention(
      `session_deadline: the provider's operation is still ${operationOf(s.snapshot)?.transaction_status ?? 'not started'}; following it until it ends`,
    );
  await s.until(() => s.isFinal());
}
