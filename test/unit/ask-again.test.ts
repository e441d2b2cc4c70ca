/**
 * paysaga's Temporal clients ask a query again when the worker answered "ask again"
 * (workflows/query-guard.ts), and nothing else.
 */
import { QueryNotRegisteredError, type WorkflowQueryInput } from '@temporalio/client';
import { askAgain, clientInterceptors } from '../../client/ask-again';
import { QUERY_CAME_WITH_NEWS } from '../../common/messages';

const INVALID_ARGUMENT = 3;
const input = { queryType: 'session' } as unknown as WorkflowQueryInput;
const query = clientInterceptors().workflow[0]!.query!;

/** A `next` that fails with each of `errors` in turn, then answers. */
function answering(errors: Error[]): { next: () => Promise<unknown>; calls: () => number } {
  let calls = 0;
  return {
    next: async () => {
      const err = errors[calls++];
      if (err) throw err;
      return 'view';
    },
    calls: () => calls,
  };
}

describe('asking a query again', () => {
  const again = () => new QueryNotRegisteredError(QUERY_CAME_WITH_NEWS, INVALID_ARGUMENT);

  it("tells the guard's answer from other failures", () => {
    expect(askAgain(again())).toBe(true);
    expect(askAgain(new QueryNotRegisteredError('no query handler named session', INVALID_ARGUMENT))).toBe(
      false,
    );
    expect(askAgain(new Error(QUERY_CAME_WITH_NEWS))).toBe(false);
  });

  it('asks again until it is answered', async () => {
    const worker = answering([again(), again()]);
    await expect(query(input, worker.next)).resolves.toBe('view');
    expect(worker.calls()).toBe(3);
  });

  it('passes any other failure on at once', async () => {
    const other = new QueryNotRegisteredError('no query handler named session', INVALID_ARGUMENT);
    const worker = answering([other]);
    await expect(query(input, worker.next)).rejects.toBe(other);
    expect(worker.calls()).toBe(1);
  });

  it('gives up after a few tries, with the last answer', async () => {
    const worker = answering(Array.from({ length: 10 }, again));
    await expect(query(input, worker.next)).rejects.toBeInstanceOf(QueryNotRegisteredError);
    expect(worker.calls()).toBe(5);
  });
});
