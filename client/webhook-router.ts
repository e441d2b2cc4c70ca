import { WorkflowIdReusePolicy } from '@temporalio/common';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { WebhookEvent } from '../provider/schemas';
import { PaymentKind, PaymentStatus } from '../workers/search-attributes';
import { providerEventSignal } from '../workflows/definitions';
import type { SessionSettings } from '../workflows/types';

export type RouteOutcome =
  /** Signaled to the session's running workflow. */
  | 'signaled'
  /** The session's workflow had closed: a late-event workflow holds the event. */
  | 'late_event'
  /** No workflow for this session (yet): the provider must deliver again later. */
  | 'unknown_session';

/**
 * Hands a verified provider event to Temporal (DESIGN decision 3). Only `signaled` and
 * `late_event` mean the event is safely stored; `unknown_session` must not be acknowledged.
 */
export async function routeProviderEvent(
  client: Client,
  event: WebhookEvent,
  opts: { taskQueue: string; settings: SessionSettings },
): Promise<RouteOutcome> {
  const id = event.session_info.id;
  const handle = client.workflow.getHandle(id);
  let running: boolean;
  try {
    running = (await handle.describe()).status.name === 'RUNNING';
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return 'unknown_session';
    throw err;
  }
  if (running) {
    try {
      await handle.signal(providerEventSignal, event);
      return 'signaled';
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      // closed between describe and signal: record it as a late event below
    }
  }
  // signalWithStart signals whatever runs under this id now, or starts the late-event workflow.
  await client.workflow.signalWithStart('lateEventWorkflow', {
    workflowId: id,
    taskQueue: opts.taskQueue,
    args: [{ sessionId: id }, opts.settings],
    signal: providerEventSignal,
    signalArgs: [event],
    workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
    typedSearchAttributes: [
      { key: PaymentKind, value: 'late_event' },
      { key: PaymentStatus, value: 'late_event' },
    ],
  });
  return 'late_event';
}
