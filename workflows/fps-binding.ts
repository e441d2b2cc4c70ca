/**
 * FPS recurring binding without a charge: the payer confirms in the bank app and the provider
 * returns a recurring token in checkout_results (spec, Endpoints rule 7).
 */
import { explainEnd, runOperation } from './payment-process';
import { closeSession, guarded, openSession, startOperation } from './session-lifecycle';
import type { SessionInput, SessionResult } from './types';

export async function fpsBindingWorkflow(input: SessionInput): Promise<SessionResult> {
  // The sum of a binding is a placeholder the provider ignores: nothing to compare it with.
  const run = openSession({ ...input, money: undefined });
  await guarded(run, async () => (await startOperation(run, input)) && runOperation(run));
  if (run.phase === 'succeeded' && !run.view().recurringToken)
    run.end('failed', 'binding_without_token: the provider returned no recurring token');
  explainEnd(run);
  return closeSession(run);
}
