/** Queries of session and subscription workflows, robust to a run that has only just started. */
import { ServiceError, WorkflowNotFoundError, type WorkflowHandle } from '@temporalio/client';
import type { QueryDefinition } from '@temporalio/common';

/**
 * gRPC codes worth another try of a query within {@link QUERY_RETRY_MS}: the run has no processed
 * task yet, the frontend blinked, or the query gave up waiting for a busy worker. A query that
 * itself waited past that budget (the server's own query timeout, with no worker polling) is not
 * repeated: the caller hears it at once (the API answers 503, retryable).
 */
const TRANSIENT_QUERY_CODES = new Set([
  4, // DEADLINE_EXCEEDED
  9, // FAILED_PRECONDITION
  14, // UNAVAILABLE
]);
const QUERY_RETRY_MS = 10_000;

function isTransientQueryFailure(err: unknown): boolean {
  const code = err instanceof ServiceError ? (err.cause as { code?: number } | undefined)?.code : undefined;
  return code !== undefined && TRANSIENT_QUERY_CODES.has(code);
}

/**
 * `query` of the workflow behind `handle`; `notFound()` is thrown when there is no such workflow.
 * A run that was just started answers queries only once a worker has processed its first task, which
 * on a busy worker can take a moment: transient failures are retried within {@link QUERY_RETRY_MS}.
 *
 * One query per workflow at a time from this process (see {@link oneQueryAtATime}): callers that
 * arrive while one is in flight share the next one, sent after they called, so each caller's answer
 * is at least as new as its call.
 */
export function queryWithRetry<T>(
  handle: WorkflowHandle,
  query: QueryDefinition<T>,
  notFound: () => Error,
): Promise<T> {
  // A real handle belongs to a client; a test's stand-in is its own owner.
  const owner: object = (handle as { client?: object }).client ?? handle;
  return oneQueryAtATime(owner, `${handle.workflowId}\0${query.name}`, () =>
    retried(handle, query, notFound),
  );
}

async function retried<T>(
  handle: WorkflowHandle,
  query: QueryDefinition<T>,
  notFound: () => Error,
): Promise<T> {
  const giveUpAt = Date.now() + QUERY_RETRY_MS;
  for (let pause = 100; ; pause = Math.min(pause * 2, 1_000)) {
    try {
      return await handle.query(query);
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) throw notFound();
      if (!isTransientQueryFailure(err) || Date.now() + pause > giveUpAt) throw err;
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}

interface Lane {
  current?: Promise<unknown>;
  /** The query that starts when `current` ends, shared by everyone who asked meanwhile. */
  next?: Promise<unknown>;
}

/** Per client, per workflow and query. Weak: a client that is gone takes its lanes with it. */
const lanes = new WeakMap<object, Map<string, Lane>>();

/**
 * Several queries of one run at once can lose one: the worker's SDK core keeps at most one query
 * task buffered per run while it works on that run (and drops what is buffered when the run is
 * evicted, e.g. as it completes), and the server then waits its full query timeout (30 s) for an
 * answer that never comes (sdk-core #578, #716; seen here as "There were leftover buffered tasks when
 * evicting run" and DEADLINE_EXCEEDED after 30 s). So this process sends one query per workflow at a
 * time; whoever asks meanwhile waits for the next one, sent after the current one ends (never an
 * answer older than the call). Each caller gets its own copy of a shared answer.
 */
function oneQueryAtATime<T>(owner: object, key: string, send: () => Promise<T>): Promise<T> {
  let byKey = lanes.get(owner);
  if (!byKey) lanes.set(owner, (byKey = new Map()));
  const map = byKey;
  let lane = map.get(key);
  if (!lane) map.set(key, (lane = {}));
  const l = lane;
  const start = (): Promise<T> => {
    const p: Promise<T> = send().finally(() => {
      if (l.current === p) l.current = undefined;
      if (!l.current && !l.next) map.delete(key);
    });
    l.current = p;
    return p;
  };
  if (!l.current) return start();
  if (!l.next) {
    const ignore = () => undefined;
    l.next = l.current.then(ignore, ignore).then(() => {
      l.next = undefined;
      return start();
    });
  }
  return (l.next as Promise<T>).then((answer) => structuredClone(answer));
}
