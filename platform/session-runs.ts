/**
 * The runs of a session's workflow (id = session id), seen from outside: which run is the latest, what a
 * closed one knew (its result is the session's state), and how news reaches a session whatever its runs
 * are doing (docs/decisions/003-webhooks-accelerate-state-is-truth.md, 012-the-session-is-one-resource.md).
 * Used by the webhook receiver, the reconciler's activities and the
 * client alike. Node-only (Temporal client).
 */
import {
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  type Client,
  type WorkflowHandle,
} from '@temporalio/client';
import { ApplicationFailure, WorkflowIdConflictPolicy, WorkflowIdReusePolicy } from '@temporalio/common';
import { workflowOf } from '../common/kinds';
import { providerEventSignal } from '../common/messages';
import { sessionSearchAttributes } from '../common/search-attributes';
import type { SessionInput, SessionState, ProviderEventDelivery } from '../common/session-input';

export type SessionRun =
  | { status: 'running'; handle: WorkflowHandle; runId: string }
  /** No run is running: the session as recorded, to be carried on by a new run. */
  | { status: 'closed'; state: SessionState }
  | { status: 'unknown' };

/** The session's state as paysaga's store last recorded it (docs/decisions/015-paysaga-remembers.md). */
export type StoredState = (sessionId: string) => Promise<SessionState | undefined>;

/**
 * The latest run of the session's workflow, or the session as the store recorded it when no run is
 * running (closed, or deleted by the namespace's retention long ago: nothing depends on Temporal keeping
 * it). A closed run the store does not know (a run from before the store) is read from its result.
 */
export async function latestRun(client: Client, sessionId: string, stored: StoredState): Promise<SessionRun> {
  const handle = client.workflow.getHandle(sessionId);
  let described;
  try {
    described = await handle.describe();
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    const state = await stored(sessionId);
    return state ? { status: 'closed', state } : { status: 'unknown' };
  }
  if (described.status.name === 'RUNNING') return { status: 'running', handle, runId: described.runId };
  const state = await stored(sessionId);
  if (state) return { status: 'closed', state };
  if (described.status.name !== 'COMPLETED' && described.status.name !== 'CONTINUED_AS_NEW')
    throw new Error(
      `the workflow of session ${sessionId} ended ${described.status.name} and the store has no record of it`,
    );
  return {
    status: 'closed',
    state: (await client.workflow.getHandle(sessionId, described.runId).result()) as SessionState,
  };
}

/** The input of a new run that carries a closed run's state on (a refund or a late event). */
export function reopenInput(state: SessionState): SessionInput {
  return {
    sessionId: state.sessionId,
    kind: state.kind,
    reference: state.reference,
    request: state.request,
    // Never used: a carried session has started (or ended) long ago.
    start: { by: 'provider' },
    settings: state.settings,
    carried: state,
    reopened: true,
  };
}

/** Start options of a new run of a closed session: the same workflow type, id and search attributes. */
export function reopenOptions(state: SessionState, taskQueue: string) {
  const phase = state.final?.phase ?? (state.attention ? 'needs_attention' : state.providerPhase);
  return {
    workflowId: state.sessionId,
    taskQueue,
    args: [reopenInput(state)] as [SessionInput],
    // A run started meanwhile by someone else takes the message instead (its state is newer).
    workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
    workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
    typedSearchAttributes: sessionSearchAttributes({
      kind: state.kind,
      status: phase,
      reference: state.reference,
      createdAt: new Date(state.createdAt),
      // As the closed run left them: a partial finalize's amount, and whether it needed attention.
      ...(state.request.money
        ? {
            amount: state.finalizeAmount ?? state.request.money.amount,
            currency: state.request.money.currency,
          }
        : {}),
      needsAttention: state.attention !== undefined,
    }),
  };
}

/**
 * An Update the run accepted but did not finish because the run ended first (continued as new or
 * closed); the server fails it with this type. Nothing of it took effect that a retry would repeat:
 * runs end only when no handler is running, and every money call carries its own key.
 */
export function updateOutlivedRun(err: unknown): boolean {
  if (!(err instanceof WorkflowUpdateFailedError)) return false;
  const cause = err.cause;
  // The server's failure type for it (its message is for people, and may change).
  return cause instanceof ApplicationFailure && cause.type === 'AcceptedUpdateCompletedWorkflow';
}

export type DeliveryOutcome =
  /** Signaled to the session's running workflow. */
  | 'signaled'
  /** The workflow had closed: a new run carries the session on with the event. */
  | 'reopened'
  /** The closed run already knew this state or a newer one (a copy, or an out-of-order delivery). */
  | 'already_known'
  /** No workflow for this session (yet): the sender must deliver it again later. */
  | 'unknown_session';

/**
 * Hands a verified provider event to the session (docs/decisions/003-webhooks-accelerate-state-is-truth.md):
 * nothing acknowledged is lost.
 * `isNewer` says whether the event would change what a closed run knew.
 */
export async function deliverProviderEvent(
  client: Client,
  taskQueue: string,
  id: string,
  delivery: ProviderEventDelivery,
  isNewer: (state: SessionState) => boolean,
  stored: StoredState,
): Promise<DeliveryOutcome> {
  for (let tries = 0; ; tries++) {
    // Nearly every event is for a running session: signal its current run at once (one call, not a
    // describe and a signal). The server refuses a signal when no run of the id is running; only then
    // does it matter whether the session is closed or unknown.
    try {
      await client.workflow.getHandle(id).signal(providerEventSignal, delivery);
      return 'signaled';
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
    }
    const run = await latestRun(client, id, stored);
    if (run.status === 'unknown') return 'unknown_session';
    if (run.status === 'running') {
      // A new run started between the signal and the look: signal again (bounded: runs do not close
      // and start that fast).
      if (tries >= 3) throw new Error(`session ${id}: its runs changed under four signals in a row`);
      continue;
    }
    if (!isNewer(run.state)) return 'already_known';
    await client.workflow.signalWithStart(workflowOf(run.state.kind), {
      ...reopenOptions(run.state, taskQueue),
      signal: providerEventSignal,
      signalArgs: [delivery],
    });
    return 'reopened';
  }
}
