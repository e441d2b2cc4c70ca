/**
 * FPS identity check of a payout recipient: no charge and no approve step; the session completes
 * when the recipient is registered in FPS and is canceled otherwise (spec, Endpoints rule 5).
 */
import { runOperation } from './payment-process';
import { closeSession, guarded, openSession } from './session-lifecycle';
import { phaseOf } from './snapshot';
import type { SessionInput, SessionResult } from './types';

export async function identityCheckWorkflow(input: SessionInput): Promise<SessionResult> {
  // Confirmed automatically: a pending check is waiting for the provider, not for the partner.
  const run = openSession(
    { ...input, money: undefined },
    {
      phaseFn: (s) => (phaseOf(s) === 'awaiting_approval' ? 'processing' : phaseOf(s)),
    },
  );
  await guarded(run, () => runOperation(run));
  if (run.phase === 'failed' || run.phase === 'canceled') run.reason ??= 'recipient_not_registered';
  return closeSession(run);
}
