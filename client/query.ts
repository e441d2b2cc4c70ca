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
 */
export async function queryWithRetry<T>(
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
