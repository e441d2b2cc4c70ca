import { WorkflowIdReusePolicy } from '@temporalio/common';
import { scrubCardData } from '../activities/failures';
import { WorkflowNotFoundError, type Client, type WorkflowHandle } from '@temporalio/client';
import type { WebhookEvent } from '../provider/schemas';
import { sessionSearchAttributes } from '../common/search-attributes';
import { providerEventSignal } from '../workflows/definitions';
import { isNewer } from '../workflows/snapshot';
import type { SessionResult, SessionSettings } from '../workflows/types';

export type RouteOutcome =
  /** Signaled to the session's running workflow. */
  | 'signaled'
  /** The session's workflow had closed: a late-event workflow holds the event. */
  | 'late_event'
  /**
   * The session's workflow had closed already knowing this state or a newer one (a duplicate or
   * an out-of-order delivery after the result): the closed run's result holds it.
   */
  | 'already_known'
  /** No workflow for this session (yet): the provider must deliver again later. */
  | 'unknown_session';

/** Whether the closed run's result already shows the event's state (or a newer one). `handle` names that run. */
async function knownToClosedRun(handle: WorkflowHandle, event: WebhookEvent): Promise<boolean> {
  try {
    const result = (await handle.result()) as SessionResult | undefined;
    return !!result?.lastSnapshot && !isNewer(event.session_info, result.lastSnapshot);
  } catch {
    // failed, terminated, or started again meanwhile: let the late-event path decide
    return false;
  }
}

/**
 * Hands a verified provider event to Temporal (DESIGN decision 3). Only `signaled`, `late_event`
 * and `already_known` mean the event is safely stored; `unknown_session` must not be acknowledged.
 */
export async function routeProviderEvent(
  client: Client,
  event: WebhookEvent,
  opts: { taskQueue: string; settings: SessionSettings },
): Promise<RouteOutcome> {
  const id = event.session_info.id;
  // Defense in depth (DESIGN decision 2): whatever a provider echoes, no card field enters Temporal.
  event = scrubCardData(event);
  const handle = client.workflow.getHandle(id);
  let running: boolean;
  let runId: string;
  try {
    const described = await handle.describe();
    running = described.status.name === 'RUNNING';
    runId = described.runId;
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
  // A copy of what the session ended with must not open a late-event run (that would take the
  // session's id for nothing and hide its result from getSession).
  if (await knownToClosedRun(client.workflow.getHandle(id, runId), event)) return 'already_known';
  // signalWithStart signals whatever runs under this id now, or starts the late-event workflow.
  await client.workflow.signalWithStart('lateEventWorkflow', {
    workflowId: id,
    taskQueue: opts.taskQueue,
    args: [{ sessionId: id }, opts.settings],
    signal: providerEventSignal,
    signalArgs: [event],
    workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
    typedSearchAttributes: sessionSearchAttributes({ kind: 'late_event', status: 'late_event' }),
  });
  return 'late_event';
}

/**
 * The provider's truth about a session, routed as if it were a webhook: for deployments without
 * webhooks (nothing polls a closed session, so a chargeback after the end is otherwise never seen)
 * and for events the provider gave up delivering. Run it from a periodic job or before acting on a
 * closed session. A running workflow gets a signal (applied forward-only); a closed one that already
 * knows this state changes nothing; anything newer is recorded by a late-event workflow.
 */
export async function syncSessionFromProvider(
  client: Client,
  provider: { state(body: { session_id: string }): Promise<{ session_info: WebhookEvent['session_info'] }> },
  sessionId: string,
  opts: { taskQueue: string; settings: SessionSettings },
): Promise<RouteOutcome> {
  const { session_info } = await provider.state({ session_id: sessionId });
  return routeProviderEvent(client, { type: 'state_sync', session_info }, opts);
}
