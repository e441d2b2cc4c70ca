/**
 * Reading a session: from the store, which keeps it for as long as it keeps anything
 * (docs/decisions/015-paysaga-remembers.md). Waiting (the long poll, the early return of creating requests)
 * watches the store too: the session writes its record whenever it comes to rest, so the record is what a
 * waiting caller is answered with, and nobody waiting sends the workflow a message
 * (docs/decisions/018-looking-never-hurts.md).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { providerEventsQuery, sessionQuery } from '../common/messages';
import type { ProviderEventRecord, SessionView } from '../common/views';
import type { SessionState } from '../common/session-input';
import { providerEventsOf, sessionState } from '../store/sessions';
import { actionable, sessionViewOf } from '../common/session-view';
import type { ClientContext } from './context';
import { SessionNotFoundError } from './errors';
import { queryWithRetry } from './query';

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
  return watchRecord(
    ctx,
    sessionId,
    undefined,
    () => true,
    Date.now() + FIRST_RECORD_WAIT_MS,
    FIRST_RECORD_PACE,
  );
}

/** How often a read looks for a first record, and a wait for a change (a read of the store costs ~1 ms). */
const FIRST_RECORD_PACE = { firstMs: 20, everyMs: 250 };
const CHANGE_PACE = { firstMs: 10, everyMs: 100 };

/**
 * Reads the session's record from the store until `done` holds of it or `giveUpAt` (epoch ms) passes:
 * soon after it starts, then twice as late each time, up to `everyMs`. Returns the last record read (or
 * `seen`, the one the caller had, when none is).
 */
async function watchRecord(
  ctx: Readers,
  sessionId: string,
  seen: SessionState | undefined,
  done: (state: SessionState) => boolean,
  giveUpAt: number,
  pace: { firstMs: number; everyMs: number },
): Promise<SessionState | undefined> {
  let state = seen;
  for (let pause = pace.firstMs; !(state && done(state)) && Date.now() < giveUpAt;) {
    await sleep(Math.min(pause, giveUpAt - Date.now()));
    pause = Math.min(pause * 2, pace.everyMs);
    state = (await sessionState(ctx.store, sessionId)) ?? state;
  }
  return state;
}

/**
 * Long poll: answers once the session's `version` is above `afterVersion` (a change; by default, the
 * version at the first look), or with `until: 'progress'` once the payer or the partner must act or the
 * result is known; at the latest after `timeoutMs`.
 */
export interface AwaitChange {
  timeoutMs: number;
  afterVersion?: number;
  until?: 'change' | 'progress';
}

/**
 * Waits for a change or for progress someone can act on (AwaitChange) in the session's record, at most
 * `timeoutMs`; then answers with the session as recorded. A session the store does not know is answered
 * at once, as a read answers it.
 */
export async function awaitSession(ctx: Readers, sessionId: string, wait: AwaitChange): Promise<SessionView> {
  const giveUpAt = Date.now() + wait.timeoutMs;
  const state = await recordedState(ctx, sessionId);
  if (!state) return readSession(ctx, sessionId);
  const after = wait.afterVersion ?? state.version;
  // A final session whose workflow has stopped following it changes no more (a late event reopens it).
  const over = (s: SessionState) =>
    s.final !== undefined && s.followUntil !== undefined && s.followUntil <= Date.now();
  const answered = (s: SessionState) =>
    over(s) || (wait.until === 'progress' ? actionable(s) : s.version > after);
  return sessionViewOf((await watchRecord(ctx, sessionId, state, answered, giveUpAt, CHANGE_PACE)) ?? state);
}

/** A view and whether the request that got it created what it shows (not enumerable: JSON shows the view). */
export type Started<T> = T & { readonly created: boolean };

export function started<T extends object>(view: T, created: boolean): Started<T> {
  return Object.defineProperty(view, 'created', { value: created, enumerable: false }) as Started<T>;
}
