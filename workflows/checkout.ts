/**
 * Card checkout: card data held by the partner (sent by the starter), the payment-form widget,
 * and recurring payments by token (merchant-initiated, or customer-initiated with 3-D Secure).
 * Holds are finalized (in full or in part) or canceled per the session's policy.
 */
import { explainEnd, runOperation } from './payment-process';
import { closeSession, guarded, openSession, startOperation } from './session-lifecycle';
import type { SessionInput, SessionResult } from './types';

export async function checkoutWorkflow(input: SessionInput): Promise<SessionResult> {
  const run = openSession(input);
  await guarded(run, async () => (await startOperation(run, input)) && runOperation(run));
  explainEnd(run);
  return closeSession(run);
}
