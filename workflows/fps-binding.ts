/**
 * FPS recurring binding without a charge: the payer confirms in the bank app, and the provider returns a
 * recurring token in checkout_results (spec, Endpoints rule 7). The sum the provider requires is a
 * placeholder it ignores, so there is no amount to check.
 *
 *   start -> approval -> the payer confirms in the bank app -> outcome (with the token) -> aftercare
 *
 * The messages it accepts are registered below, in sight (common/kinds.ts KINDS says the same).
 */
import { reason } from '../common/reasons';
import type { SessionInput, SessionState } from '../common/session-input';
import { Session } from './session';
import { acceptProviderNews, answerReads } from './steps/messages';
import { aftercare } from './steps/aftercare';
import { acceptDecisions, approval } from './steps/decisions';
import { outcome } from './steps/outcome';
import { payerAction } from './steps/payer';
import { startOperation } from './steps/start';

export async function fpsBindingWorkflow(input: SessionInput): Promise<SessionState> {
  const session = new Session(input);
  acceptProviderNews(session);
  answerReads(session);
  acceptDecisions(session, ['approve', 'cancel']);

  if (await startOperation(session, input.start)) {
    const deadline = session.reducer.deadline();
    await approval(session, deadline);
    await payerAction(session, deadline);
    await outcome(session, deadline);
    // The provider's word stands (succeeded), but a binding without its token is of no use: say so.
    if (session.phase === 'succeeded' && !session.view().recurringToken)
      session.journal.needsAttention(
        reason('binding_without_token', 'the provider reported success without a recurring token'),
      );
  }
  await aftercare(session);
  return session.close();
}
