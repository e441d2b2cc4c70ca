/**
 * When Temporal answers a session's Update or query with a timeout or a refusal, the cause may be the
 * session itself: its workflow fails every task (a bug, a nondeterministic deploy), so it answers
 * nothing. Told apart from Temporal being down by describing the workflow: a pending workflow task on
 * its second attempt or later is a failing session, not "Temporal cannot be reached". The API answers 503
 * `session_failing` with a log line and a metric.
 */
import { ServiceError, WorkflowUpdateRPCTimeoutOrCancelledError, type Client } from '@temporalio/client';

/** A session (or subscription) whose workflow fails its tasks: paysaga is unwell, not the caller. */
export class WorkflowTaskFailingError extends Error {
  constructor(
    readonly workflowId: string,
    readonly attempt: number,
    readonly since?: string,
  ) {
    super(
      `${workflowId}: its workflow fails on every task (attempt ${attempt}${since ? ` since ${since}` : ''}); ` +
        'operators are alerted, nothing moves until it is fixed',
    );
    this.name = 'WorkflowTaskFailingError';
  }
}

/** `err` as WorkflowTaskFailingError when the workflow's task is failing, else `err` itself. */
export async function explainTemporalFailure(
  client: Client,
  workflowId: string,
  err: unknown,
): Promise<unknown> {
  if (!(err instanceof WorkflowUpdateRPCTimeoutOrCancelledError) && !(err instanceof ServiceError))
    return err;
  try {
    const { raw } = await client.workflow.getHandle(workflowId).describe();
    const task = raw.pendingWorkflowTask;
    const attempt = task?.attempt ?? 0;
    if (attempt < 2) return err;
    const seconds = Number(task?.originalScheduledTime?.seconds ?? 0);
    return new WorkflowTaskFailingError(
      workflowId,
      attempt,
      seconds > 0 ? new Date(seconds * 1000).toISOString() : undefined,
    );
  } catch {
    return err; // Temporal itself does not answer: the original error says so
  }
}
