/**
 * A payout to a card (raw card data from the starter, hashed card data from the tokenization widget, a
 * tokenized card, a recurring token) or to an FPS account.
 *
 *   start -> approval -> outcome -> aftercare
 *
 * Signals: providerEvent. Queries: session, providerEvents, recordedProviderEvents.
 * Updates: awaitChange; approve, cancel (manual approval); claimStart and reportStart while the starter
 * sends card data.
 */
import type { SessionInput, SessionState } from '../common/session-input';
import { Session } from './session';
import { aftercare } from './steps/aftercare';
import { acceptDecisions, approval } from './steps/decisions';
import { outcome } from './steps/outcome';
import { acceptStarter, startOperation } from './steps/start';

export async function payoutWorkflow(input: SessionInput): Promise<SessionState> {
  const session = new Session(input);
  acceptStarter(session);
  acceptDecisions(session, ['approve', 'cancel']);

  if (await startOperation(session, input.start)) {
    const deadline = session.deadline();
    await approval(session, deadline);
    await outcome(session, deadline);
  }
  await aftercare(session);
  return session.close();
}
