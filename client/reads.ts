/**
 * Reading a session: from the store, which keeps it for as long as it keeps anything (DESIGN decision
 * 15); live waiting (long poll, the early return of creating requests) asks the session's running
 * workflow, and reads the store once no run is there to ask.
 */
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { awaitChangeUpdate, sessionQuery, type AwaitChange } from '../common/messages';
import type { SessionView } from '../common/views';
import { sessionState } from '../store/sessions';
import { sessionViewOf } from '../common/session-view';
import type { ClientContext } from './context';
import { SessionNotFoundError } from './errors';
import { queryWithRetry } from './query';
import { explainTemporalFailure } from './workflow-health';

type Readers = Pick<ClientContext, 'store' | 'temporal'>;

/**
 * The session as recorded. A session whose workflow has just started and not yet written its first
 * record is read from the workflow.
 */
export async function readSession(ctx: Readers, sessionId: string): Promise<SessionView> {
  const state = await sessionState(ctx.store, sessionId);
  if (state) return sessionViewOf(state);
  return queryWithRetry(
    ctx.temporal.workflow.getHandle(sessionId),
    sessionQuery,
    () => new SessionNotFoundError(sessionId),
  );
}

/**
 * Waits for a change (after `afterVersion`) or for progress someone can act on, at most `timeoutMs`; a
 * session with no running workflow has nothing more to wait for and is read as recorded.
 */
export async function awaitSession(ctx: Readers, sessionId: string, wait: AwaitChange): Promise<SessionView> {
  if (wait.timeoutMs <= 0) return readSession(ctx, sessionId);
  try {
    return await ctx.temporal.workflow
      .getHandle(sessionId)
      .executeUpdate(awaitChangeUpdate, { args: [wait] });
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError) && !(err instanceof WorkflowUpdateFailedError))
      throw await explainTemporalFailure(ctx.temporal, sessionId, err);
    return readSession(ctx, sessionId);
  }
}

/** A view and whether the request that got it created what it shows (not enumerable: JSON shows the view). */
export type Started<T> = T & { readonly created: boolean };

export function started<T extends object>(view: T, created: boolean): Started<T> {
  return Object.defineProperty(view, 'created', { value: created, enumerable: false }) as Started<T>;
}
