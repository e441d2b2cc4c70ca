/**
 * Reconciliation at any size (docs/decisions/003-webhooks-accelerate-state-is-truth.md): the provider is
 * the truth, and webhooks can be lost or switched off. Pass after pass, the money-moving sessions created
 * within `windowMs` are read from the provider a page at a time and compared with what each session
 * knows; news is delivered to the session (a running one gets a signal, a closed one a new run), a
 * provider contradicting a final result is reported as drift. The cursor is carried across pages and
 * runs; a failing list call is waited out.
 *
 *   list a page -> re-read each session -> next page ... -> pause -> continue as new -> next pass
 *
 * Each pass is a run of its own: after the pause it continues as new, carrying only its state, so the
 * history stays short and a new build of the workers takes the reconciler over between two passes (the
 * run is pinned to the build that started it; docs/decisions/019-every-worker-is-versioned.md).
 * One per task queue, `reconciler-<task queue>`, started idempotently (client/reconciler.ts). Each page's
 * counts and findings go to the store (GET /v1/reconciliation reads them there), retried through an
 * outage of the store like the provider's.
 * Queries: reconciler (counts of the current and last pass, the latest findings).
 */
import * as wf from '@temporalio/workflow';
import type { ReconcileActivities } from '../activities/reconcile-activities';
import {
  reconcilerQuery,
  type DriftRecord,
  type ReconcilerInput,
  type ReconcilerState,
} from '../common/reconciler';
import { untilAnswered } from './calls';
import { HISTORY_LIMITS, historyLong, nextRunOnCurrentBuild } from './history';

const acts = wf.proxyActivities<ReconcileActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1s', maximumInterval: '30s', maximumAttempts: 5 },
});

const RECENT_KEPT = 50;

export async function reconcilerWorkflow(input: ReconcilerInput, carried?: ReconcilerState): Promise<void> {
  const state: ReconcilerState = carried ?? {
    passes: 0,
    totals: { checked: 0, inSync: 0, repaired: 0, drift: 0, failed: 0 },
    recent: [],
    listFailures: 0,
    runs: 0,
  };
  wf.setHandler(reconcilerQuery, () => state);
  const drift = wf.metricMeter.createCounter('paysaga_reconciler_findings_total');

  for (;;) {
    const pass = (state.current ??= {
      startedAt: new Date(Date.now()).toISOString(),
      checked: 0,
      inSync: 0,
      repaired: 0,
      drift: 0,
      failed: 0,
    });
    const createdAfter = new Date(Date.parse(pass.startedAt) - input.windowMs).toISOString();
    const page = await untilAnswered(
      () =>
        acts.listSessions({
          createdAfter,
          pageSize: input.pageSize,
          ...(pass.cursor ? { cursor: pass.cursor } : {}),
        }),
      { pauseMs: 5_000, maxMs: 5 * 60_000, onTrouble: () => state.listFailures++ },
    );
    const findings: DriftRecord[] = [];
    for (const sessionId of page.sessionIds) {
      let found;
      try {
        found = await acts.reconcileSession(sessionId);
      } catch (err) {
        // One session that cannot be read must not stop the others; it is read again next pass.
        if (!(err instanceof wf.ActivityFailure)) throw err;
        found = { outcome: 'failed' as const, detail: err.cause?.message ?? err.message };
      }
      pass.checked++;
      state.totals.checked++;
      const key = found.outcome === 'in_sync' ? 'inSync' : found.outcome;
      pass[key]++;
      state.totals[key]++;
      if (found.outcome !== 'in_sync') {
        drift.add(1, { outcome: found.outcome });
        const record: DriftRecord = {
          sessionId,
          at: new Date(Date.now()).toISOString(),
          outcome: found.outcome,
          detail: found.detail ?? '',
        };
        state.recent.push(record);
        findings.push(record);
        if (state.recent.length > RECENT_KEPT) state.recent.splice(0, state.recent.length - RECENT_KEPT);
      }
    }
    if (!page.next) pass.finishedAt = new Date(Date.now()).toISOString();
    const { cursor: _cursor, ...counts } = pass;
    await untilAnswered(
      () =>
        acts.recordReconciliation({
          id: `${wf.workflowInfo().taskQueue}/${pass.startedAt}`,
          pass: counts,
          listFailures: state.listFailures,
          findings,
        }),
      { pauseMs: 5_000, maxMs: 5 * 60_000, onTrouble: () => undefined },
    );
    if (page.next) {
      pass.cursor = page.next;
      // A pass over very many sessions continues as new between two pages, where it stands.
      if (historyLong(input.continueAsNewAfter ?? HISTORY_LIMITS.reconciler)) await nextRun(input, state);
      continue;
    }
    delete pass.cursor;
    state.lastPass = pass;
    delete state.current;
    state.passes++;
    await wf.sleep(input.everyMs);
    await nextRun(input, state);
  }
}

/** The next run, on the build Temporal now routes new work to when a new one was made current. */
function nextRun(input: ReconcilerInput, state: ReconcilerState): Promise<never> {
  return nextRunOnCurrentBuild<typeof reconcilerWorkflow>(input, { ...state, runs: state.runs + 1 });
}
