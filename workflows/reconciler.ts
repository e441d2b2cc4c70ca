/**
 * Reconciliation for deployments without webhooks: every `everyMs`, the sessions whose workflow
 * closed within `windowMs` are read from the provider again, so that what happens after the end
 * (a chargeback, a refund made elsewhere, a late result) is recorded as a late event, never lost.
 * One per task queue (`reconciler-<task queue>`); stop it by cancelling or terminating it.
 */
import * as wf from '@temporalio/workflow';
import type { ReconcileActivities } from '../activities/reconcile-activities';
import { reconcilerQuery } from './definitions';
import type { ReconcilerInput, ReconcilerState } from './types';

const acts = wf.proxyActivities<ReconcileActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1s', maximumInterval: '30s', maximumAttempts: 5 },
});

export async function reconcilerWorkflow(input: ReconcilerInput, carried?: ReconcilerState): Promise<void> {
  const state: ReconcilerState = carried ?? { rounds: 0, synced: 0, lateEvents: 0, failed: 0 };
  wf.setHandler(reconcilerQuery, () => state);
  for (let round = 0; round < (input.roundsPerRun ?? 100); round++) {
    const closedAfter = new Date(Date.now() - input.windowMs).toISOString();
    for (const sessionId of await acts.listClosedPaymentSessions(closedAfter, input.maxPerRound)) {
      try {
        const outcome = await acts.syncSession(sessionId);
        state.synced++;
        if (outcome === 'late_event') state.lateEvents++;
      } catch (err) {
        // One session the provider refuses must not stop the others; it is tried again next round.
        if (!(err instanceof wf.ActivityFailure)) throw err;
        state.failed++;
        wf.log.warn('reconcile: session not synced', { sessionId, error: err.cause?.message ?? err.message });
      }
    }
    state.rounds++;
    state.lastRoundAt = new Date(Date.now()).toISOString();
    await wf.sleep(input.everyMs);
  }
  await wf.continueAsNew<typeof reconcilerWorkflow>(input, state);
}
