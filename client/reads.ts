/** Reading a session, also while it changes (long poll), whatever its workflow's runs are doing. */
import { WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { awaitChangeUpdate, sessionQuery, type AwaitChange } from '../common/messages';
import type { SessionView } from '../common/views';
import { SessionNotFoundError } from './errors';
import { queryWithRetry } from './query';

/** The session as its latest run knows it (running, or closed). */
export function readSession(temporal: Client, sessionId: string): Promise<SessionView> {
  return queryWithRetry(
    temporal.workflow.getHandle(sessionId),
    sessionQuery,
    () => new SessionNotFoundError(sessionId),
  );
}

/**
 * Waits for a change (after `afterVersion`) or for progress someone can act on, at most `timeoutMs`; a
 * closed run has nothing more to wait for and is read as it is.
 */
export async function awaitSession(
  temporal: Client,
  sessionId: string,
  wait: AwaitChange,
): Promise<SessionView> {
  if (wait.timeoutMs <= 0) return readSession(temporal, sessionId);
  try {
    return await temporal.workflow.getHandle(sessionId).executeUpdate(awaitChangeUpdate, { args: [wait] });
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError) && !(err instanceof WorkflowUpdateFailedError)) throw err;
    return readSession(temporal, sessionId);
  }
}

/** A view and whether the request that got it created what it shows (not enumerable: JSON shows the view). */
export type Started<T> = T & { readonly created: boolean };

export function started<T extends object>(view: T, created: boolean): Started<T> {
  return Object.defineProperty(view, 'created', { value: created, enumerable: false }) as Started<T>;
}
