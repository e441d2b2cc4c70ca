/**
 * FPS identity check of a payout recipient: no charge and no approve step; the session completes
 * when the recipient is registered in FPS and is canceled otherwise (spec, Endpoints rule 5).
 */
import { runOperation } from './payment-process';
import { closeSession, guarded, openSession } from './session-lifecycle';
import { failureReason, phaseOf } from './snapshot';
import type { SessionInput, SessionPhase, SessionResult } from './types';

/** Confirmed automatically: a pending check waits for the provider, not for the partner. */
function identityPhase(p: SessionPhase): SessionPhase {
  if (p === 'awaiting_approval') return 'processing';
  // The spec's wording: an unregistered recipient cancels the session (it is not a failed payout).
  return p === 'failed' ? 'canceled' : p;
}

export async function identityCheckWorkflow(input: SessionInput): Promise<SessionResult> {
  const run = openSession({ ...input, money: undefined }, { phaseFn: (s) => identityPhase(phaseOf(s)) });
  await guarded(run, () => runOperation(run));
  if (run.phase !== 'succeeded' && !run.reason) {
    const code = failureReason(run.snapshot) ?? 'recipient_not_registered';
    run.reason =
      code === 'recipient_not_registered'
        ? 'recipient_not_registered: the phone number is not registered in FPS'
        : `identity_check_failed: ${code}`;
  }
  return closeSession(run);
}
