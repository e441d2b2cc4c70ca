/**
 * sdk-core, the Temporal SDK's native core (in @temporalio/worker 1.24, and unchanged upstream), can
 * lose a workflow task while its workflow cache is full. Two tasks of one run that is not cached (the
 * Temporal UI's query and the run's next workflow task, each sent with the whole history after a task
 * timed out on a loaded worker) wait together for a cache slot; when one frees, core applies both and
 * drops the activation the second produced, logging {@link LOST_TASK_LOG} at ERROR
 * (worker/workflow/workflow_stream.rs). That run's task then never completes; once the cache picks the
 * run for eviction, every task waiting for a slot waits behind it, and the worker stops polling
 * workflow tasks: the sessions it serves stand still (activities still run) until the worker is
 * replaced. Nothing is lost meanwhile: the server keeps each task, and a new worker replays each
 * session from its history.
 *
 * paysaga's workers hear the core's log (workers/logging.ts, the test Runtime) and replace their
 * Temporal worker when the line appears (workers/kept-worker.ts).
 */

/** What sdk-core logs, at ERROR, when it drops a workflow activation. */
export const LOST_TASK_LOG = 'Extra buffered run should not have produced an activation';

const listeners = new Set<() => void>();

/** Calls `listener` whenever sdk-core loses a workflow task in this process; returns the unsubscribe. */
export function onLostWorkflowTask(listener: () => void): () => void {
  listeners.add(listener);
  return () => void listeners.delete(listener);
}

/** Every log line the SDK forwards from its core passes here. */
export function noticeCoreLog(level: string, message: string): void {
  if (level !== 'ERROR' || message !== LOST_TASK_LOG) return;
  for (const listener of [...listeners]) listener();
}
