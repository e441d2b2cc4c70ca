/**
 * A minimal reproduction of sdk-core's query path splitting a workflow task (docs/limits.md, "Under
 * query load, a session can, rarely, wedge on the SDK's query path"), so that anyone can see when
 * upstream fixes it.
 *
 * A workflow (bench/query-split/workflows.ts) waits for a signal and takes one of two steps by how long
 * the wait took. Its worker stops; an operator queries it (the UI's `__stack_trace`); the signal arrives
 * a moment later; a new worker starts. When the query task reaches the worker first (one run in five
 * to eight here, the task the signal asked for the others), it carries the signal:
 * sdk-core applies the signal in an activation of its own, with the clock of the last workflow task, to
 * answer the query, and keeps the commands for the next task. A replay of the finished history applies
 * the signal with the next task, at that task's time, takes the other branch and fails with a
 * nondeterminism error. The same run without the query replays.
 *
 *   npm run bench -- query-split          (BENCH_N runs of each, 40 by default)
 *
 * Prints, for each case, how many runs took which branch live and how many histories replay. While the
 * defect stands, the queried runs say "on time" live and fail to replay; once fixed, every history replays.
 */
import { randomUUID } from 'node:crypto';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { startLocalTemporal } from '../test/helpers/local-temporal';
import { queryBeforeTask, replayErrorOf } from '../test/helpers/query-first';
import * as activities from './query-split/activities';
import { go, LATE_MS, splitWorkflow } from './query-split/workflows';
import { machineLine } from './support';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

interface Outcome {
  live: string;
  replayError?: string;
}

export async function main(): Promise<void> {
  const runs = Number(process.env.BENCH_N ?? 40);
  // The replays' nondeterminism is the finding, printed below, not a warning of the run.
  Runtime.install({
    logger: new DefaultLogger('ERROR'),
    telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' }, forward: {} } },
  });
  console.log(machineLine());
  const local = await startLocalTemporal();
  const connection = await Connection.connect({ address: local.env.address });
  const client = new Client({ connection, namespace: local.namespace });
  const native = await NativeConnection.connect({ address: local.env.address });
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('./query-split/workflows'),
    logger: new DefaultLogger('WARN'),
  });
  /** One run: queried (or not) while no worker runs, then the signal, after the wait counts as late. */
  async function once(queried: boolean): Promise<Outcome> {
    const taskQueue = `query-split-${randomUUID()}`;
    const between = async (handle: WorkflowHandle) => {
      await sleep(LATE_MS + 500);
      await handle.signal(go);
    };
    const start = (tq: string) => client.workflow.start(splitWorkflow, { taskQueue: tq, workflowId: tq });
    if (queried) {
      const run = await queryBeforeTask<string>({
        client,
        connection: native,
        namespace: local.namespace,
        code,
        activities,
        taskQueue,
        start,
        between,
      });
      return { live: run.result, ...(run.replayError ? { replayError: run.replayError } : {}) };
    }
    const worker = await Worker.create({
      connection: native,
      namespace: local.namespace,
      taskQueue,
      workflowBundle: { code },
      activities,
    });
    return worker.runUntil(async () => {
      const handle = await start(taskQueue);
      await between(handle);
      const live = await handle.result();
      const replayError = await replayErrorOf(handle, code);
      return replayError ? { live, replayError } : { live };
    });
  }

  try {
    for (const queried of [false, true]) {
      const outcomes: Outcome[] = [];
      for (let i = 0; i < runs; i++) outcomes.push(await once(queried));
      const replayed = outcomes.filter((o) => !o.replayError).length;
      const live = outcomes.reduce<Record<string, number>>(
        (n, o) => ({ ...n, [o.live]: (n[o.live] ?? 0) + 1 }),
        {},
      );
      console.log(
        `${queried ? 'queried while the signal waited' : 'not queried'}: ${runs} runs, live ${JSON.stringify(live)}, ` +
          `${replayed} of ${runs} histories replay`,
      );
      for (const error of new Set(outcomes.flatMap((o) => (o.replayError ? [o.replayError] : []))))
        console.log(`  replay: ${error}`);
      if (queried)
        console.log(
          replayed < runs
            ? 'the defect stands: a query answered before a workflow task changed what the task decided'
            : 'every queried history replays: upstream may have fixed it (a query that reaches the worker ' +
                'after the task shows nothing, and one run in five to eight gets there first here: rerun with a ' +
                'larger BENCH_N to be sure)',
        );
    }
  } finally {
    await native.close();
    await connection.close();
    await local.env.teardown();
  }
}
