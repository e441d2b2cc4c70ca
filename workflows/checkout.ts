/**
 * A payment into the partner's account: card data held by the partner (sent by the starter), the
 * payment-form widget, or a recurring token (merchant-initiated, or customer-initiated with 3-D Secure).
 *
 *   start -> approval -> the payer's action (3-D Secure) -> finalization (holds) -> outcome -> aftercare
 *
 * The messages it accepts are registered below, in sight (common/kinds.ts KINDS says the same).
 */
import type { SessionInput, SessionState } from '../common/session-input';
import { Session } from './session';
import { acceptProviderNews, answerReads } from './steps/messages';
import { aftercare, acceptRefunds } from './steps/aftercare';
import { acceptDecisions, approval, finalization } from './steps/decisions';
import { outcome } from './steps/outcome';
import { payerAction } from './steps/payer';
import { acceptStarter, startOperation } from './steps/start';

export async function checkoutWorkflow(input: SessionInput): Promise<SessionState> {
  const session = new Session(input);
  acceptProviderNews(session);
  answerReads(session);
  acceptStarter(session);
  acceptDecisions(session, ['approve', 'cancel', 'finalize']);
  acceptRefunds(session);

  if (await startOperation(session, input.start)) {
    const deadline = session.reducer.deadline();
    await approval(session, deadline);
    await payerAction(session, deadline);
    await finalization(session, deadline);
    await outcome(session, deadline);
  }
  await aftercare(session);
  return session.close();
}
