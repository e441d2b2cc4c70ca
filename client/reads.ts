/**
 * Reading a session: from the store, which keeps it for as long as it keeps anything
 * (docs/decisions/015-paysaga-remembers.md); live waiting (long poll, the early return of creating requests) asks the session's running
 * workflow, and reads the store once no run is there to ask.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { awaitChangeUpdate, providerEventsQuery, sessionQuery, type AwaitChange } from '../common/messages';
import type { ProviderEventRecord, SessionView } from '../common/views';
import type { SessionState } from '../common/session-input';
import { providerEventsOf, sessionState } from '../store/sessions';
import { sessionViewOf } from '../common/session-view';
import type { ClientContext } from './context';
import { SessionNotFoundError } from './errors';
import { queryWithRetry } from './query';
import { explainTemporalFailure } from './workflow-health';

type Readers = Pick<ClientContext, 'store' | 'temporal'>;

/**
 * The session as recorded. A session whose workflow has just started is read from its first record once
 * written (firstRecord); only a record later than that is read from the workflow.
 */
export async function readSession(ctx: Readers, sessionId: string): Promise<SessionView> {
  const state = await recordedState(ctx, sessionId);
  if (state) return sessionViewOf(state);
  return queryWithRetry(
    ctx.temporal.workflow.getHandle(sessionId),
    sessionQuery,
    () => new SessionNotFoundError(sessionId),
  );
}

/** The session's recorded state; for one that has just started, its first record (briefly waited for). */
export async function recordedState(ctx: Readers, sessionId: string): Promise<SessionState | undefined> {
  return (await sessionState(ctx.store, sessionId)) ?? (await firstRecord(ctx, sessionId));
}

/**
 * The webhook audit trail from the store: every entry (the workflow keeps only the latest), for as long
 * as the store keeps the session. A session the store does not know yet is asked.
 */
export async function readProviderEvents(ctx: Readers, sessionId: string): Promise<ProviderEventRecord[]> {
  const entries = await providerEventsOf(ctx.store, sessionId);
  // No entry: a session recorded before any event came, or one the store does not know (yet).
  if (entries.length > 0 || (await recordedState(ctx, sessionId)))
    return entries.map(({ seq: _seq, ...entry }) => entry);
  return queryWithRetry(
    ctx.temporal.workflow.getHandle(sessionId),
    providerEventsQuery,
    () => new SessionNotFoundError(sessionId),
  );
}

/**
 * How long a read of a session that has just started waits for its first record, written when the session
 * first comes to rest (workflows/session/recorder.ts; a starter's card call comes first); after it, the
 * workflow is asked.
 */
const FIRST_RECORD_WAIT_MS = 3_000;

/**
 * The first record of a session whose workflow runs but has not written one yet: it is written when the
 * session first comes to rest (or, when the starter sends the card, with the starter's report), so a read
 * waits for it (briefly) rather than asking the workflow: the store is where sessions are read. Undefined
 * when there is no running workflow or the record is late (the caller then asks the workflow).
 */
async function firstRecord(ctx: Readers, sessionId: string): Promise<SessionState | undefined> {
  try {
    const { status } = await ctx.temporal.workflow.getHandle(sessionId).describe();
    if (status.name !== 'RUNNING') return undefined;
  } catch {
    return undefined;
  }
  const giveUpAt = Date.now() + FIRST_RECORD_WAIT_MS;
  for (let pause = 20; Date.now() + pause <= giveUpAt; pause = Math.min(pause * 2, 250)) {
    await sleep(pause);
    const state = await sessionState(ctx.store, sessionId);
    if (state) return state;
  }
  return undefined;
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
