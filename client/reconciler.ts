/**
 * Starting the reconciler, the safety net of webhooks-off deployments (README design section, 3): one
 * `reconcilerWorkflow` per task queue, so any number of workers and starters can ask for it.
 */
import type { Client } from '@temporalio/client';
import { WorkflowIdConflictPolicy } from '@temporalio/common';
import type { ReconcilerInput } from '../workflows/types';

export function reconcilerWorkflowId(taskQueue: string): string {
  return `reconciler-${taskQueue}`;
}

/** Starts the reconciler of `taskQueue`, or finds the running one (its input stays). */
export async function ensureReconciler(
  temporal: Client,
  taskQueue: string,
  input: ReconcilerInput,
): Promise<string> {
  const workflowId = reconcilerWorkflowId(taskQueue);
  await temporal.workflow.start('reconcilerWorkflow', {
    workflowId,
    taskQueue,
    args: [input],
    workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
  });
  return workflowId;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The reconciler asked for by the environment: PAYSAGA_RECONCILE_EVERY_MS turns it on;
 * PAYSAGA_RECONCILE_WINDOW_MS (default 30 days, how long after closing a session is re-read) and
 * PAYSAGA_RECONCILE_MAX_PER_ROUND (default 500). Undefined when it is off; a bad value is an error
 * that names the variable.
 */
export function reconcilerInputFromEnv(env: NodeJS.ProcessEnv): ReconcilerInput | undefined {
  const every = positiveInt(env, 'PAYSAGA_RECONCILE_EVERY_MS');
  if (every === undefined) return undefined;
  return {
    everyMs: every,
    windowMs: positiveInt(env, 'PAYSAGA_RECONCILE_WINDOW_MS') ?? 30 * DAY_MS,
    maxPerRound: positiveInt(env, 'PAYSAGA_RECONCILE_MAX_PER_ROUND') ?? 500,
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
