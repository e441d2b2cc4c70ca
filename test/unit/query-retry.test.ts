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

describe('queryWithRetry: one query per workflow at a time', () => {
  /** A client with workflows whose queries answer only when the test says, counting what was sent. */
  function client() {
    const sent: { workflowId: string; answer: (v: unknown) => void }[] = [];
    const owner = {};
    const handle = (workflowId: string) =>
      ({
        client: owner,
        workflowId,
        query: () => new Promise((resolve) => sent.push({ workflowId, answer: resolve })),
      }) as unknown as WorkflowHandle;
    return { sent, handle };
  }
  const tick = () => new Promise((r) => setImmediate(r));

  it('callers during a query share the next one, sent after it ends; each gets its own copy', async () => {
    const { sent, handle } = client();
    const first = queryWithRetry(handle('ps_1'), q, notFound);
    await tick();
    const later = [1, 2, 3].map(() => queryWithRetry(handle('ps_1'), q, notFound));
    await tick();
    expect(sent).toHaveLength(1); // nobody else reached the workflow while the first query ran
    sent[0]!.answer({ phase: 'processing' });
    expect(await first).toEqual({ phase: 'processing' });
    await tick();
    expect(sent).toHaveLength(2); // one query, sent after the first ended, for the three
    sent[1]!.answer({ phase: 'succeeded' });
    const answers = await Promise.all(later);
    expect(answers).toEqual([{ phase: 'succeeded' }, { phase: 'succeeded' }, { phase: 'succeeded' }]);
    expect(new Set(answers).size).toBe(3);
    // Nothing is kept once the queries ended: the next caller sends its own.
    const after = queryWithRetry(handle('ps_1'), q, notFound);
    await tick();
    expect(sent).toHaveLength(3);
    sent[2]!.answer({ phase: 'succeeded' });
    await after;
  });

  it('other workflows are queried at the same time', async () => {
    const { sent, handle } = client();
    const both = [queryWithRetry(handle('ps_1'), q, notFound), queryWithRetry(handle('ps_2'), q, notFound)];
    await tick();
    expect(sent.map((s) => s.workflowId)).toEqual(['ps_1', 'ps_2']);
    for (const s of sent) s.answer({ sessionId: s.workflowId });
    expect(await Promise.all(both)).toEqual([{ sessionId: 'ps_1' }, { sessionId: 'ps_2' }]);
  });

  it('a failed query fails its callers only; the queued ones get a query of their own', async () => {
    const handle = {
      client: {},
      workflowId: 'ps_3',
      query: jest
        .fn()
        .mockImplementationOnce(() => Promise.reject(grpc(3)))
        .mockImplementationOnce(() => Promise.resolve(view)),
    } as unknown as WorkflowHandle;
    const first = queryWithRetry(handle, q, notFound);
    const second = queryWithRetry(handle, q, notFound);
    await expect(first).rejects.toThrow('Failed to query Workflow');
    await expect(second).resolves.toEqual(view);
  });
});
