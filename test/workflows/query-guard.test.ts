/**
 * A query that reaches the worker before the workflow task its news asked for changes nothing the
 * workflow decides (workflows/query-guard.ts, docs/decisions/018-looking-never-hurts.md).
 *
 * The workflow (test/fixtures/query-split-workflow.ts) decides by `Date.now()` how long it waited for a
 * signal; without the guard, sdk-core applies a signal carried by a query task with the last task's
 * time, the workflow takes the "on time" branch and its history fails to replay (`npm run bench --
 * query-split`). Bundled with the guard, as paysaga's workers bundle it, that activation is refused: the
 * query is answered "ask again", the signal is taken in its own task, and the history replays.
 *
 * Each try sends the query while no worker runs and the signal follows (test/helpers/query-first.ts).
 * Tries go on until the guard refused a query twice (about one try in five), and every try took the
 * branch its time says and replays.
 */
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection } from '@temporalio/worker';
import { QUERY_CAME_WITH_NEWS } from '../../common/messages';
import { workflowBundleOptions } from '../../workers/workflow-bundle-options';
import { go, LATE_MS, splitWorkflow } from '../fixtures/query-split-workflow';
import { queryBeforeTask, type QueryFirst } from '../helpers/query-first';
import { testAddress, testNamespace, uniqueTaskQueue } from '../helpers/temporal';

const REFUSALS_WANTED = 2;
const MAX_TRIES = 80;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

jest.setTimeout(8 * 60_000);

describe('the query guard', () => {
  let connection: Connection;
  let native: NativeConnection;
  let client: Client;
  let code: string;
  beforeAll(async () => {
    connection = await Connection.connect({ address: testAddress() });
    client = new Client({ connection, namespace: testNamespace() });
    native = await NativeConnection.connect({ address: testAddress() });
    ({ code } = await bundleWorkflowCode({
      workflowsPath: require.resolve('../fixtures/query-split-workflow'),
      // The interceptors paysaga's workers bundle.
      workflowInterceptorModules: workflowBundleOptions().workflowInterceptorModules ?? [],
      logger: new DefaultLogger('WARN'),
    }));
  });
  afterAll(async () => {
    await native?.close();
    await connection?.close();
  });

  const tryOnce = (): Promise<QueryFirst<string>> =>
    queryBeforeTask<string>({
      client,
      connection: native,
      namespace: testNamespace(),
      code,
      activities: { step: async () => undefined },
      taskQueue: uniqueTaskQueue('query-guard'),
      start: (taskQueue) => client.workflow.start(splitWorkflow, { taskQueue, workflowId: taskQueue }),
      // The signal comes once the wait counts as late, while no worker runs.
      between: async (handle: WorkflowHandle) => {
        await sleep(LATE_MS + 500);
        await handle.signal(go);
      },
    });

  it('refuses news that comes with a query, and every history replays', async () => {
    const tries: QueryFirst<string>[] = [];
    const refused = () => tries.filter((t) => t.queryError === QUERY_CAME_WITH_NEWS).length;
    while (tries.length < MAX_TRIES && refused() < REFUSALS_WANTED) tries.push(await tryOnce());
    process.stderr.write(`[query-guard] ${tries.length} tries, ${refused()} queries answered "ask again"\n`);
    expect({
      replayErrors: tries.filter((t) => t.replayError).map((t) => t.replayError),
      otherQueryErrors: tries.filter((t) => t.queryError && t.queryError !== QUERY_CAME_WITH_NEWS),
      branches: [...new Set(tries.map((t) => t.result))],
    }).toEqual({ replayErrors: [], otherQueryErrors: [], branches: ['late'] });
    // If no query was refused in MAX_TRIES, the SDK no longer splits tasks this way: see bench query-split.
    expect(refused()).toBeGreaterThanOrEqual(REFUSALS_WANTED);
  });
});
