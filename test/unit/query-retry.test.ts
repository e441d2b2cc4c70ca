import { ServiceError, WorkflowNotFoundError, type WorkflowHandle } from '@temporalio/client';
import { queryWithRetry } from '../../client/query';
import { sessionQuery as q } from '../../common/messages';

const view = { sessionId: 'ps_1' };

/** A handle whose query answers with the given outcomes in turn (errors are thrown). */
function handleAnswering(outcomes: unknown[]): { handle: WorkflowHandle; calls: () => number } {
  let calls = 0;
  const handle = {
    query: async () => {
      const outcome = outcomes[Math.min(calls++, outcomes.length - 1)];
      if (outcome instanceof Error) throw outcome;
      return outcome;
    },
  } as unknown as WorkflowHandle;
  return { handle, calls: () => calls };
}

const grpc = (code: number) =>
  new ServiceError('Failed to query Workflow', { cause: Object.assign(new Error('grpc'), { code }) });
const notFound = () => new Error('no such session');

describe('queryWithRetry', () => {
  it('rides out a run that has not processed its first task yet (FAILED_PRECONDITION, UNAVAILABLE)', async () => {
    const { handle, calls } = handleAnswering([grpc(9), grpc(14), view]);
    await expect(queryWithRetry(handle, q, notFound)).resolves.toBe(view);
    expect(calls()).toBe(3);
  });

  it('an unknown workflow is the caller’s not-found error, at once', async () => {
    const { handle, calls } = handleAnswering([new WorkflowNotFoundError('gone', 'ps_1', undefined)]);
    await expect(queryWithRetry(handle, q, notFound)).rejects.toThrow('no such session');
    expect(calls()).toBe(1);
  });

  it('any other failure is thrown at once (INVALID_ARGUMENT, a plain error)', async () => {
    for (const err of [grpc(3), new Error('boom')]) {
      const { handle, calls } = handleAnswering([err, view]);
      await expect(queryWithRetry(handle, q, notFound)).rejects.toBe(err);
      expect(calls()).toBe(1);
    }
  });
});
