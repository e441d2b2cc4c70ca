/**
 * A minimal reproduction of sdk-core's query path splitting a workflow task, so that anyone can see
 * when upstream fixes it, and what paysaga's query guard (workflows/query-guard.ts) does about it.
 *
 * A workflow (test/fixtures/query-split-workflow.ts) waits for a signal and takes one of two steps by
 * how long the wait took. Its worker stops; an operator queries it (the UI's `__stack_trace`); the
 * signal arrives a moment later; a new worker starts. When the query task reaches the worker first (one
 * run in five to eight here, the task the signal asked for the others), it carries the signal: sdk-core
 * applies the signal in an activation of its own, with the clock of the last workflow task, to answer
 * the query, and keeps the commands for the next task. A replay of the finished history applies the
 * signal with the next task, at that task's time, takes the other branch and fails with a
 * nondeterminism error. The same run without the query replays. With the guard bundled (as paysaga's
 * workers bundle it), that activation is refused: the query is answered "ask again", the worker takes
 * the signal in its task, and every history replays.
 *
 *   npm run bench -- query-split          (BENCH_N runs of each case, 40 by default)
 *
 * Prints, for each case, how many runs took which branch live, how many queries were refused and how
 * many histories replay. While the defect stands, the queried runs without the guard say "on time" live
 * and fail to replay; once fixed, every history replays and the guard refuses nothing.
 */
import { randomUUID } from 'node:crypto';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { QUERY_CAME_WITH_NEWS } from '../common/messages';
import { go, LATE_MS, splitWorkflow } from '../test/fixtures/query-split-workflow';
import { startLocalTemporal } from '../test/helpers/local-temporal';
import { queryBeforeTask, replayErrorOf } from '../test/helpers/query-first';
import { machineLine } from './support';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const activities = { step: async (): Promise<void> => undefined };

interface Outcome {
  live: string;
  refused: boolean;
  replayError?: string;
}

const CASES = [
  { name: 'not queried', queried: false, guarded: false },
  { name: 'queried while the signal waited', queried: true, guarded: false },
  { name: "queried while the signal waited, with paysaga's query guard", queried: true, guarded: true },
] as const;

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
  const bundle = async (guarded: boolean) =>
    (
      await bundleWorkflowCode({
        workflowsPath: require.resolve('../test/fixtures/query-split-workflow'),
        ...(guarded ? { workflowInterceptorModules: [require.resolve('../workflows/query-guard')] } : {}),
        logger: new DefaultLogger('WARN'),
      })
    ).code;
  const codes = { plain: await bundle(false), guarded: await bundle(true) };

  /** One run: queried (or not) while no worker runs, then the signal, after the wait counts as late. */
  async function once(queried: boolean, code: string): Promise<Outcome> {
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
      return {
        live: run.result,
        refused: run.queryError === QUERY_CAME_WITH_NEWS,
        ...(run.replayError ? { replayError: run.replayError } : {}),
      };
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
      return { live, refused: false, ...(replayError ? { replayError } : {}) };
    });
  }

  try {
    for (const { name, queried, guarded } of CASES) {
      const code = guarded ? codes.guarded : codes.plain;
      const outcomes: Outcome[] = [];
      for (let i = 0; i < runs; i++) outcomes.push(await once(queried, code));
      const replayed = outcomes.filter((o) => !o.replayError).length;
      const refused = outcomes.filter((o) => o.refused).length;
      const live = outcomes.reduce<Record<string, number>>(
        (n, o) => ({ ...n, [o.live]: (n[o.live] ?? 0) + 1 }),
        {},
      );
      console.log(
        `${name}: ${runs} runs, live ${JSON.stringify(live)}, ${refused} queries answered "ask again", ` +
          `${replayed} of ${runs} histories replay`,
      );
      for (const error of new Set(outcomes.flatMap((o) => (o.replayError ? [o.replayError] : []))))
        console.log(`  replay: ${error}`);
      if (queried && !guarded)
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
