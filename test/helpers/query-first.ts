/**
 * An operator's query that reaches a workflow's worker before the workflow task its news asked for
 * (docs/decisions/018-looking-never-hurts.md, "When a query comes with news"). The workflow's first
 * task runs on a worker that keeps nothing (so no sticky queue), which then stops; the UI's
 * `__stack_trace` query is sent and, with no task pending, waits on the task queue; `between` makes the
 * news (a signal, or time for a timer to fire); a worker with a cache starts. Whichever of the query
 * task and the workflow task reaches it first decides (the query, about one run in five here). Returns
 * the workflow's result, the query's error and the error of replaying its finished history, if any.
 */
import type { Client, WorkflowHandle } from '@temporalio/client';
import { type NativeConnection, Worker } from '@temporalio/worker';

export interface QueryFirst<T> {
  result: T;
  replayError?: string;
  /** The query's error, if it failed (the guard's "ask again", workflows/query-guard.ts). */
  queryError?: string;
}

export async function queryBeforeTask<T>(o: {
  client: Client;
  connection: NativeConnection;
  namespace: string;
  /** The workflow bundle's code. */
  code: string;
  activities: object;
  taskQueue: string;
  start(taskQueue: string): Promise<WorkflowHandle>;
  /** What happens while no worker runs, after the query was sent. */
  between(handle: WorkflowHandle): Promise<void>;
}): Promise<QueryFirst<T>> {
  const worker = (maxCachedWorkflows: number) =>
    Worker.create({
      connection: o.connection,
      namespace: o.namespace,
      taskQueue: o.taskQueue,
      workflowBundle: { code: o.code },
      activities: o.activities,
      maxCachedWorkflows,
    });
  const first = await worker(0);
  const firstRunning = first.run();
  const handle = await o.start(o.taskQueue);
  while (!((await handle.fetchHistory()).events ?? []).some((e) => e.workflowTaskCompletedEventAttributes))
    await new Promise((r) => setTimeout(r, 20));
  first.shutdown();
  await firstRunning;
  const query = handle.query<string>('__stack_trace').then(
    () => undefined,
    (e: Error) => e.message,
  );
  // The next worker is made first, so that it polls the moment the news is in the history.
  const second = await worker(100);
  await o.between(handle);
  const [queryError, result] = await second.runUntil(async () => {
    const e = await query;
    return [e, (await handle.result()) as T] as const;
  });
  const replayError = await replayErrorOf(handle, o.code);
  return { result, ...(replayError ? { replayError } : {}), ...(queryError ? { queryError } : {}) };
}

/** The error of replaying the workflow's history as it stands against `code` (its first line), if any. */
export async function replayErrorOf(handle: WorkflowHandle, code: string): Promise<string | undefined> {
  try {
    await Worker.runReplayHistory(
      { workflowBundle: { code } },
      await handle.fetchHistory(),
      handle.workflowId,
    );
    return undefined;
  } catch (err) {
    return `${(err as Error).name}: ${(err as Error).message.split('\n')[0]}`;
  }
}
