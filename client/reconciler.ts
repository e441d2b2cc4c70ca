/**
 * Starting the reconciler (workflows/reconciler.ts), the safety net for lost or switched-off webhooks:
 * one per task queue, started idempotently, so any number of workers and starters can ask for it.
 */
import type { Client } from '@temporalio/client';
import { WorkflowIdConflictPolicy } from '@temporalio/common';
import { reconcilerQuery, reconcilerWorkflowId, type ReconcilerInput } from '../common/reconciler';
import type { ReconciliationReport } from '../common/views';
import { queryWithRetry } from './query';
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

class NoReconciler extends Error {}

/**
 * The reconciler's report (GET /v1/reconciliation): its last pass, the pass in progress, totals and the
 * latest findings, from its query; `not_started` when no reconciler ever ran for the task queue.
 */
export async function reconciliationReport(
  temporal: Client,
  taskQueue: string,
): Promise<ReconciliationReport> {
  const workflowId = reconcilerWorkflowId(taskQueue);
  const handle = temporal.workflow.getHandle(workflowId);
  let state;
  try {
    state = await queryWithRetry(handle, reconcilerQuery, () => new NoReconciler());
  } catch (err) {
    if (err instanceof NoReconciler) return { workflowId, status: 'not_started' };
    throw err;
  }
  const { status } = await handle.describe();
  const { cursor: _cursor, ...current } = state.current ?? { cursor: undefined };
  return {
    workflowId,
    status: status.name === 'RUNNING' ? 'running' : 'stopped',
    passes: state.passes,
    ...(state.lastPass ? { lastPass: state.lastPass } : {}),
    ...(state.current ? { current: current as NonNullable<ReconciliationReport['current']> } : {}),
    totals: state.totals,
    findings: [...state.recent].reverse(),
    listFailures: state.listFailures,
    runs: state.runs,
  };
}

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
