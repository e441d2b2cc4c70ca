/**
 * Waiting for a session's result in tests: looks at the session (its query) until its phase is final,
 * then until it is at rest with it (shown in its search attributes, its record written: no record write
 * in flight), as a caller reading the store or the UI next expects; whatever its workflow does afterwards
 * (it keeps following the session for `followMs`). Reads the workflow itself (a closed run answers its
 * query): what the API shows from the store is tested through the API. A look that fails as the API
 * would answer retryable (a query no worker answered in time: the worker restarting, or a query lost
 * beside another one of the same run, client/query.ts) is taken again within `ms`, as a caller retries
 * a retryable answer.
 */
import type { Client } from '@temporalio/client';
import { sessionQuery } from '../../common/messages';
import { PaymentStatus } from '../../common/search-attributes';
import type { SessionView } from '../../common/views';
import { toApiError } from '../../api/errors';
import { until } from './until';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function finalView(temporal: Client, sessionId: string, ms = 90_000): Promise<SessionView> {
  const deadline = Date.now() + ms;
  const handle = temporal.workflow.getHandle(sessionId);
  const late = (view: unknown, what: string) =>
    new Error(`session ${sessionId} is not ${what} after ${ms} ms: ${JSON.stringify(view)}`);
  const look = async (): Promise<SessionView | undefined> => {
    try {
      return await handle.query(sessionQuery);
    } catch (err) {
      if (!retryable(err) || Date.now() > deadline) throw named(err);
      return undefined;
    }
  };
  let view: SessionView | undefined;
  for (let pause = 25; ; pause = Math.min(pause * 2, 250)) {
    view = await look();
    if (view?.final) break;
    if (Date.now() > deadline) throw late(view, 'final');
    await sleep(pause);
  }
  for (let pause = 25; ; pause = Math.min(pause * 2, 250)) {
    const d = await handle.describe();
    const writing = (d.raw.pendingActivities ?? []).some((a) => a.activityType?.name === 'recordSession');
    if (
      d.status.name !== 'RUNNING' ||
      (d.typedSearchAttributes.get(PaymentStatus) === view.phase && !writing)
    ) {
      const atRest = await look();
      if (atRest) return atRest;
    }
    if (Date.now() > deadline) throw late(view, 'at rest');
    await sleep(pause);
  }
}

/**
 * Polls `read` (a read of a session or subscription through paysaga's client) until `shows` holds,
 * within `ms`. A read the API would answer with a retryable error (Temporal could not answer it just
 * then: the worker restarting, a query past its budget) is taken again, as a backend retries a
 * retryable answer; when time runs out, the last view seen or the last failure is named.
 */
export async function viewUntil<T>(
  what: string,
  read: () => Promise<T>,
  shows: (v: T) => boolean,
  ms = 90_000,
  everyMs = 250,
): Promise<T> {
  const seen = await until(
    what,
    async (): Promise<{ view: T } | { failure: string }> => {
      try {
        return { view: await read() };
      } catch (err) {
        if (!retryable(err)) throw named(err);
        return { failure: named(err).message };
      }
    },
    (look) => 'view' in look && shows(look.view),
    ms,
    everyMs,
  );
  return (seen as { view: T }).view;
}

/** A failure the API answers as retryable (api/errors.ts): the caller asks again. */
function retryable(err: unknown): boolean {
  return toApiError(err).retryable;
}

/** `err`, its message naming the gRPC code behind it when Temporal's client wraps one. */
function named(err: unknown): Error {
  const e = err as Error & { cause?: { code?: unknown; details?: unknown } };
  const code = e.cause?.code;
  if (!(err instanceof Error) || typeof code !== 'number') return err as Error;
  return new Error(`${e.message} (gRPC ${code}: ${String(e.cause?.details ?? '')})`, { cause: err });
}
