/** Opening, starting and closing a session run: the parts every kind shares. */
import * as wf from '@temporalio/workflow';
import { operationOf } from './snapshot';
import { provider, SessionRun, type SessionRunOptions } from './session-run';
import type { SessionInput, SessionResult } from './types';

export function openSession(input: SessionInput, extra: Partial<SessionRunOptions> = {}): SessionRun {
  const run = new SessionRun({
    sessionId: input.sessionId,
    kind: input.kind,
    reference: input.reference,
    settings: input.settings,
    ...(input.money ? { money: input.money } : {}),
    ...extra,
  });
  if (input.initialSnapshot) run.apply(input.initialSnapshot, 'call', 'initiate');
  return run;
}

/** Gets the operation going at the provider, the way the input says; false when it never started. */
export async function startOperation(run: SessionRun, input: SessionInput): Promise<boolean> {
  const { start } = input;
  switch (start.by) {
    case 'workflow': {
      const snapshot = await provider.startOperation(input.sessionId, start.operation, start.body, 'start');
      run.apply(snapshot, 'call', `start/${start.operation}`);
      return true;
    }
    case 'provider':
      return true;
    case 'widget':
      run.publicToken = await provider.createPaymentFormToken(input.sessionId, start.widget);
      run.log('call', 'public_token', 'payment form token created');
      return waitForOperation(
        run,
        input.settings.deadlines.payerActionMs,
        'payer_did_not_use_the_payment_form',
      );
    case 'starter':
      return waitForOperation(
        run,
        input.settings.deadlines.startMs,
        'not_started: card data was never submitted',
      );
  }
}

/** The starter or the payer starts the operation outside the workflow: wait until the provider shows it. */
async function waitForOperation(run: SessionRun, withinMs: number, reason: string): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (!operationOf(run.snapshot) && !run.isFinal()) {
    if (!(await run.waitForProgress(deadline))) {
      await run.poll();
      if (!operationOf(run.snapshot)) {
        run.end('canceled', reason);
        return false;
      }
    }
  }
  return true;
}

/** Lets running update handlers finish, then returns the final view as the workflow result. */
export async function closeSession(run: SessionRun): Promise<SessionResult> {
  await wf.condition(wf.allHandlersFinished);
  return run.view();
}

/**
 * Runs the saga; a provider call that fails for good (refused, invalid state) ends the session
 * with the provider's reason instead of failing the workflow, after one look at the truth.
 */
export async function guarded(run: SessionRun, saga: () => Promise<unknown>): Promise<void> {
  try {
    await saga();
  } catch (err) {
    if (!(err instanceof wf.ActivityFailure)) throw err;
    const cause = err.cause instanceof wf.ApplicationFailure ? err.cause : undefined;
    run.log('call', 'failed', cause?.message ?? err.message);
    try {
      await run.poll();
    } catch {
      // the state could not be read either; the reason below says what failed
    }
    run.end(
      run.phase === 'succeeded' ? 'succeeded' : 'failed',
      `provider_error: ${cause?.type ?? 'error'}: ${cause?.message ?? err.message}`,
    );
  }
}
