/**
 * A payout to a card (raw card data from the starter, hashed card data from the tokenization widget, a
 * tokenized card, a recurring token) or to an FPS account; or several payouts in one session (a batch,
 * or payouts added later), sent one at a time, each with its own approval and result.
 *
 *   start -> (approval -> outcome -> the next payout)* -> aftercare
 *
 * The messages it accepts are registered below, in sight (common/kinds.ts KINDS says the same).
 */
import type { SessionInput, SessionState } from '../common/session-input';
import { Session } from './session';
import { acceptProviderNews, answerReads } from './steps/messages';
import { aftercare } from './steps/aftercare';
import { acceptDecisions, approval } from './steps/decisions';
import { outcome } from './steps/outcome';
import { acceptPayouts, currentPayoutEnded, startNextPayout } from './steps/payouts';
import { acceptStarter, startOperation } from './steps/start';

export async function payoutWorkflow(input: SessionInput): Promise<SessionState> {
  const session = new Session(input);
  acceptProviderNews(session);
  answerReads(session);
  acceptStarter(session);
  acceptDecisions(session, ['approve', 'cancel']);
  acceptPayouts(session);

  if (await startOperation(session, input.start)) {
    let deadline = session.reducer.deadline();
    do {
      await approval(session, deadline);
      await outcome(session, deadline, () => currentPayoutEnded(session));
      // Each later payout has a session's time of its own from when it is sent.
      deadline = Date.now() + session.state.settings.deadlines.sessionMs;
    } while (await startNextPayout(session));
  }
  await aftercare(session);
  return session.close();
}
