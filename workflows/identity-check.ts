/**
 * An FPS identity check of a payout recipient: no charge and no approval; the session completes when the
 * recipient is registered in FPS and is canceled otherwise (spec, Endpoints rule 5). The provider call
 * that made the session (sbp/identity_check, by the reference's intake) also started it.
 *
 *   outcome
 *
 * The messages it accepts are registered below, in sight (common/kinds.ts KINDS says the same).
 */
import type { SessionPhase } from '../common/kinds';
import { reason, type EndReason } from '../common/reasons';
import type { SessionInput, SessionState } from '../common/session-input';
import type { SessionInfo } from '../provider/schemas';
import { Session } from './session';
import { acceptProviderNews, answerReads } from './steps/messages';
import { phaseOf } from '../common/snapshot';
import { outcome } from './steps/outcome';

/** Confirmed automatically: a pending check waits for the provider, not for the partner. */
function identityPhase(info: SessionInfo | undefined): SessionPhase {
  const p = phaseOf(info);
  if (p === 'awaiting_approval') return 'processing';
  // The spec's wording: an unregistered recipient cancels the session (it is not a failed payout).
  return p === 'failed' ? 'canceled' : p;
}

function explain(code: string | undefined): EndReason {
  return !code || code === 'recipient_not_registered'
    ? reason('recipient_not_registered', 'the phone number is not registered in FPS')
    : reason('identity_check_failed', undefined, { providerCode: code });
}

export async function identityCheckWorkflow(input: SessionInput): Promise<SessionState> {
  const session = new Session(input, { phase: identityPhase, explain });
  acceptProviderNews(session);
  answerReads(session);
  if (!session.isFinal()) await outcome(session, session.reducer.deadline());
  return session.close();
}
