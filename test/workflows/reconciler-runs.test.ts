/**
 * The reconciler's bookkeeping at any size (workflows/reconciler.ts) on the real Temporal dev server,
 * with its two activities played by the test: a list call that fails once is waited out and resumed
 * from its cursor, and with a low history limit the workflow continues as new between pages, carrying
 * the cursor, the pass in progress and the totals, so every listed session is re-read exactly once. The
 * pass goes to a real store page by page (a write that fails once is retried); the store shows the pass
 * and its finding once.
 * (The real activities, against the sandbox and visibility, are in reconciler.test.ts and
 * test/e2e/reconciler-process.test.ts.)
 */
import { ApplicationFailure } from '@temporalio/common';
import type { ReconcileActivities } from '../../activities/reconcile-activities';
import { reconcilerQuery, reconcilerWorkflowId, type ReconcilerState } from '../../common/reconciler';
import { recordPass, reconciliationOf } from '../../store/reconciliation';
import { testStore } from '../helpers/store';
import { runTestWorker, uniqueTaskQueue } from '../helpers/temporal';

jest.setTimeout(120_000);

const SESSIONS = ['ps_r1', 'ps_r2', 'ps_r3', 'ps_r4', 'ps_r5', 'ps_r6', 'ps_r7'];
const PAGE = 2;

test('a failed list call is waited out and the cursor crosses continue-as-new: each session once, one pass', async () => {
  const listed: (string | undefined)[] = [];
  const reread: string[] = [];
  let failedOnce = false;
  let storeFailedOnce = false;
  const store = await testStore();
  const taskQueue = uniqueTaskQueue('reconciler-runs');
  const activities: ReconcileActivities = {
    async recordReconciliation(record) {
      // The store is down for the second page's write once.
      if (record.pass.checked === 4 && !storeFailedOnce) {
        storeFailedOnce = true;
        throw ApplicationFailure.nonRetryable('store unavailable', 'StoreUnavailable');
      }
      await recordPass(store, { ...record, taskQueue });
    },
    async listSessions({ pageSize, cursor }) {
      listed.push(cursor);
      // The third page's list call fails once (visibility unreachable), after two pages were read.
      if (cursor === 'p4' && !failedOnce) {
        failedOnce = true;
        throw ApplicationFailure.nonRetryable('visibility unavailable', 'TemporalUnavailable');
      }
      const from = cursor ? Number(cursor.slice(1)) : 0;
      const to = from + pageSize;
      return { sessionIds: SESSIONS.slice(from, to), ...(to < SESSIONS.length ? { next: `p${to}` } : {}) };
    },
    async reconcileSession(sessionId) {
      reread.push(sessionId);
      return sessionId === 'ps_r3' ? { outcome: 'repaired', detail: 'refund found' } : { outcome: 'in_sync' };
    },
  };
  await runTestWorker({ taskQueue, workflowBundle: 'shared', activities }, async ({ client }) => {
    const workflowId = reconcilerWorkflowId(taskQueue);
    const first = await client.workflow.start('reconcilerWorkflow', {
      workflowId,
      taskQueue,
      // One pass, then a long pause; a run holds about one page of history before it continues as new.
      args: [{ everyMs: 3_600_000, windowMs: 86_400_000, pageSize: PAGE, continueAsNewAfter: 12 }],
    });
    const handle = client.workflow.getHandle(workflowId);
    let state: ReconcilerState = await handle.query(reconcilerQuery);
    const deadline = Date.now() + 60_000;
    while (!state.lastPass) {
      if (Date.now() > deadline) throw new Error(`no pass finished: ${JSON.stringify(state)}`);
      await new Promise((r) => setTimeout(r, 250));
      state = await handle.query(reconcilerQuery);
    }
    await handle.terminate('test over');

    // Every page listed once from its cursor; the failed call was made again from the same cursor.
    expect(listed).toEqual([undefined, 'p2', 'p4', 'p4', 'p6']);
    // Every session re-read exactly once although the pass spans several runs.
    expect(reread).toEqual(SESSIONS);
    expect(state.runs).toBeGreaterThanOrEqual(2);
    expect(state.listFailures).toBe(1);
    expect(state.passes).toBe(1);
    expect(state.lastPass).toMatchObject({ checked: 7, inSync: 6, repaired: 1, drift: 0, failed: 0 });
    expect(state.totals).toEqual({ checked: 7, inSync: 6, repaired: 1, drift: 0, failed: 0 });
    expect(state.recent).toEqual([expect.objectContaining({ sessionId: 'ps_r3', outcome: 'repaired' })]);
    expect(state.current).toBeUndefined();
    expect((await handle.describe()).runId).not.toBe(first.firstExecutionRunId);
  });
  // What GET /v1/reconciliation reads: the same pass and finding, each once.
  const recorded = await reconciliationOf(store, taskQueue);
  await store.close();
  expect(storeFailedOnce).toBe(true);
  expect(recorded).toMatchObject({
    passes: 1,
    lastPass: { checked: 7, inSync: 6, repaired: 1, drift: 0, failed: 0, finishedAt: expect.any(String) },
    totals: { checked: 7, inSync: 6, repaired: 1, drift: 0, failed: 0 },
    findings: [{ sessionId: 'ps_r3', outcome: 'repaired', detail: 'refund found' }],
    listFailures: 1,
  });
  expect(recorded?.current).toBeUndefined();
});
