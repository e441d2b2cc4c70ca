/**
 * Starting the reconciler (workflows/reconciler.ts), the safety net for lost or switched-off webhooks:
 * one per task queue, started idempotently, so any number of workers and starters can ask for it.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { WorkflowIdConflictPolicy } from '@temporalio/common';
import { reconcilerWorkflowId, type ReconcilerInput } from '../common/reconciler';
import type { ReconciliationReport } from '../common/views';
import type { Store } from '../store/database';
import { reconciliationOf } from '../store/reconciliation';
import type { reconcilerWorkflow } from '../workflows/reconciler';

export { reconcilerWorkflowId };

/** Starts the reconciler of `taskQueue`, or finds the running one (its input stays). */
export async function ensureReconciler(
  temporal: Client,
  taskQueue: string,
  input: ReconcilerInput,
): Promise<string> {
  const workflowId = reconcilerWorkflowId(taskQueue);
  await temporal.workflow.start<typeof reconcilerWorkflow>('reconcilerWorkflow', {
    workflowId,
    taskQueue,
    args: [input],
    workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
  });
  return workflowId;
}

/**
 * The reconciler's report (GET /v1/reconciliation): its last pass, the pass in progress, totals and the
 * latest findings, from the store (the reconciler writes them a page at a time); whether it runs, from
 * Temporal. `not_started` when no reconciler ever ran or recorded a pass for the task queue.
 */
export async function reconciliationReport(
  temporal: Client,
  store: Store,
  taskQueue: string,
): Promise<ReconciliationReport> {
  const workflowId = reconcilerWorkflowId(taskQueue);
  const [recorded, status] = await Promise.all([
    reconciliationOf(store, taskQueue),
    temporal.workflow
      .getHandle(workflowId)
      .describe()
      .then(
        (d) => (d.status.name === 'RUNNING' ? 'running' : 'stopped'),
        (err: unknown) => {
          if (err instanceof WorkflowNotFoundError) return undefined;
          throw err;
        },
      ),
  ]);
  if (!recorded && !status) return { workflowId, status: 'not_started' };
  if (!recorded)
    return { workflowId, status: status!, passes: 0, totals: NO_COUNTS, findings: [], listFailures: 0 };
  return { workflowId, status: status ?? 'stopped', ...recorded };
}

const NO_COUNTS = { checked: 0, inSync: 0, repaired: 0, drift: 0, failed: 0 };

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The reconciler asked for by the environment: PAYSAGA_RECONCILE_EVERY_MS turns it on;
 * PAYSAGA_RECONCILE_WINDOW_MS (default 30 days: sessions created within it are re-read) and
 * PAYSAGA_RECONCILE_PAGE_SIZE (default 200 sessions a page). Undefined when it is off; a bad value is
 * an error that names the variable.
 */
export function reconcilerInputFromEnv(env: NodeJS.ProcessEnv): ReconcilerInput | undefined {
  const every = positiveInt(env, 'PAYSAGA_RECONCILE_EVERY_MS');
  if (every === undefined) return undefined;
  return {
    everyMs: every,
    windowMs: positiveInt(env, 'PAYSAGA_RECONCILE_WINDOW_MS') ?? 30 * DAY_MS,
    pageSize: positiveInt(env, 'PAYSAGA_RECONCILE_PAGE_SIZE') ?? 200,
  };
}

function positiveInt(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n <= 0)
    throw new Error(`${name} must be a positive whole number, got ${raw}`);
  return n;
}
