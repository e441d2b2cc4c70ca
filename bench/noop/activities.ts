/** The no-op checkout's activities (noop/workflows.ts): they return at once; no provider. */
import { Context, getClient } from '@temporalio/activity';
import type { NoopEvent } from './workflows';

let opened = 0;

/** A new session id, as transaction/initiate would give. */
export async function initiate(_reference: string): Promise<string> {
  return `ps_noop_${process.pid}_${++opened}`;
}

export async function approve(_sessionId: string): Promise<void> {}

/** What paysaga's publishEvent does: a signal-with-start of the subject's outbox, nothing else. */
export async function publishEvent(event: NoopEvent): Promise<void> {
  await getClient().workflow.signalWithStart('noopOutboxWorkflow', {
    workflowId: `events-${event.session_id}`,
    taskQueue: Context.current().info.taskQueue,
    args: [{ subject: event.session_id, idleMs: 24 * 3_600_000 }],
    signal: 'outboxEvent',
    signalArgs: [event],
  });
}
