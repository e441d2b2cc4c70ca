/**
 * Payout to a card (raw card from the starter, hashed card from the tokenization widget,
 * tokenized card, recurring token) or to an FPS account: approve (or cancel), then the result.
 */
import { runOperation } from './payment-process';
import { closeSession, guarded, openSession, startOperation } from './session-lifecycle';
import type { SessionInput, SessionResult } from './types';

export async function payoutWorkflow(input: SessionInput): Promise<SessionResult> {
  const run = openSession(input);
  await guarded(run, async () => (await startOperation(run, input)) && runOperation(run));
  return closeSession(run);
}
