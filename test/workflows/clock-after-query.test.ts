/**
 * A decision by the time after a wait that ran out is the same live and on replay, even when an
 * operator's query reached the worker first. sdk-core applies the events a query task carries (here the
 * fired timer) with the time of the workflow's last task; a replay applies them with the next task's time
 * (docs/decisions/018-looking-never-hurts.md; `npm run bench -- query-split` shows the defect on
 * `Date.now()`). paysaga's workflows decide by WorkflowClock, which reads at least the end of a wait that
 * ran out.
 *
 * Each try sends the query while no worker runs and the timer fires (test/helpers/query-first.ts). When
 * the query reaches the worker first, the activation that sees the timer fire has the older time. Tries
 * go on until that was seen twice (about one try in five), and every history replays.
 */
import * as path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection } from '@temporalio/worker';
import type { ClockDecision } from '../fixtures/clock-workflow';
import { queryBeforeTask, type QueryFirst } from '../helpers/query-first';
import { testAddress, testNamespace, uniqueTaskQueue } from '../helpers/temporal';

const WAIT_MS = 1_000;
const SPLITS_WANTED = 2;
const MAX_TRIES = 80;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

jest.setTimeout(8 * 60_000);

describe('the workflow clock after a query split a task', () => {
  let connection: Connection;
  let native: NativeConnection;
  let client: Client;
  let code: string;
  beforeAll(async () => {
    connection = await Connection.connect({ address: testAddress() });
    client = new Client({ connection, namespace: testNamespace() });
    native = await NativeConnection.connect({ address: testAddress() });
    ({ code } = await bundleWorkflowCode({
      workflowsPath: path.join(__dirname, '..', 'fixtures', 'clock-workflow.ts'),
      logger: new DefaultLogger('WARN'),
    }));
  });
  afterAll(async () => {
    await native?.close();
    await connection?.close();
  });

  const tryOnce = (): Promise<QueryFirst<ClockDecision>> =>
    queryBeforeTask<ClockDecision>({
      client,
      connection: native,
      namespace: testNamespace(),
      code,
      activities: { step: async () => undefined },
      taskQueue: uniqueTaskQueue('clock-split'),
      start: (taskQueue) =>
        client.workflow.start('waitThenDecide', { taskQueue, workflowId: taskQueue, args: [WAIT_MS] }),
      // The timer fires while no worker runs.
      between: () => sleep(WAIT_MS + 300),
    });

  it('decides live as the replay does', async () => {
    const tries: QueryFirst<ClockDecision>[] = [];
    while (tries.length < MAX_TRIES && tries.filter((t) => t.result.sawAnOlderTime).length < SPLITS_WANTED)
      tries.push(await tryOnce());
    const splits = tries.filter((t) => t.result.sawAnOlderTime).length;
    process.stderr.write(`[clock] ${tries.length} tries, ${splits} saw the fired timer with an older time\n`);
    expect(tries.filter((t) => t.replayError).map((t) => t.replayError)).toEqual([]);
    expect(tries.every((t) => t.result.due)).toBe(true);
    // If no try saw the older time, the SDK no longer splits tasks this way: see bench query-split.
    expect(splits).toBeGreaterThanOrEqual(SPLITS_WANTED);
  });
});
