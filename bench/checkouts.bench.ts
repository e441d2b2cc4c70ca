/**
 * Card checkouts per second, paysaga against a no-op of the same shape, on the same dev server in the
 * same run. paysaga: `payments.sessions.startCardCheckout(..., {waitMs: 5000})` as `POST
 * /v1/checkouts` does it (Update-with-Start of the reference, the card sent to the sandbox, the card's
 * answer Update that waits for the result), with the worker and the API (whose public listener
 * verifies and signals the sandbox's webhooks) in this process and the sandbox in its own; frictionless
 * card, approval and finalization automatic, so each checkout is initiate, start, approve, result.
 * The floor (bench/floor/, docs/decisions/017-speed-against-a-fixed-floor.md): a workflow started by the
 * client, one activity, three signals, then it completes; on the same server with paysaga's worker settings
 * and the same concurrency. Rounds alternate the floor and paysaga, so that a change of load on a shared
 * machine falls on both. Run: `npm run bench -- checkouts` (BENCH_N checkouts per row, BENCH_CONCURRENCY in
 * flight, BENCH_ROUNDS rounds; BENCH_CPU_PROF=<dir> writes a CPU profile of paysaga's rows there).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Session } from 'node:inspector/promises';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { request } from 'undici';
import { CardDetails, redactPans } from '../provider';
import type { LedgerEntry } from '../sandbox/ledger';
import { checkLedger } from './sessions.bench';
import { startFloor } from './floor/run';
import {
  benchSettings,
  operationsPer,
  sandboxForApi,
  startBenchServer,
  type BenchServer,
  startPaysaga,
  webhooksReceived,
  type PaysagaStack,
} from './lib/stack';
import { childPidsNamed, cpuMsOf } from './lib/processes';
import { machineLine, percentile, round1, runBounded } from './support';
import { TEST_CARD } from '../sandbox/test-cards';
import { workflowBundleOptions } from '../workers/workflow-bundle-options';

const FRICTIONLESS_CARD = TEST_CARD.visa;
const WAIT_MS = 5_000;

interface Row {
  round: number;
  workflow: 'floor' | 'paysaga';
  checkouts: number;
  perSec: number;
  p50Ms: number;
  p95Ms: number;
  /** CPU of this process (worker, API, driver) during the row, % of one core. */
  processCpuPct: number;
  /** CPU of the whole machine (dev server and sandbox included), % of all cores. */
  machineCpuPct: number;
  /** CPU time per checkout, ms: this process (worker, API, driver), the sandbox, the dev server. */
  cpuMsPaysagaProcess: number;
  cpuMsSandbox: number;
  cpuMsDevServer: number;
}

/** The processes whose CPU a row accounts for, besides this one. */
interface Pids {
  sandbox: number;
  server: number;
}

function machineCpu(): { idle: number; total: number } {
  let idle = 0;
  let total = 0;
  for (const c of os.cpus()) {
    idle += c.times.idle;
    total += c.times.user + c.times.nice + c.times.sys + c.times.idle + c.times.irq;
  }
  return { idle, total };
}

async function measure(
  server: BenchServer,
  pids: Pids,
  ops: Record<Row['workflow'], Record<string, number>>,
  round: number,
  workflow: Row['workflow'],
  n: number,
  concurrency: number,
  checkout: (i: number) => Promise<void>,
): Promise<Row> {
  const opsBefore = await server.operations();
  const cpu = process.cpuUsage();
  const machine = machineCpu();
  const others = { sandbox: cpuMsOf(pids.sandbox), server: cpuMsOf(pids.server) };
  const { latenciesMs, wallMs } = await runBounded(n, concurrency, checkout);
  const used = process.cpuUsage(cpu);
  const after = machineCpu();
  const othersAfter = { sandbox: cpuMsOf(pids.sandbox), server: cpuMsOf(pids.server) };
  // The last webhooks and events of the row's checkouts settle before they are counted.
  await new Promise((r) => setTimeout(r, 1_500));
  for (const [op, count] of Object.entries(operationsPer(opsBefore, await server.operations(), 1)))
    ops[workflow][op] = (ops[workflow][op] ?? 0) + count;
  return {
    round,
    workflow,
    checkouts: n,
    perSec: round1((n / wallMs) * 1000),
    p50Ms: Math.round(percentile(latenciesMs, 50)),
    p95Ms: Math.round(percentile(latenciesMs, 95)),
    processCpuPct: Math.round(((used.user + used.system) / 1e3 / wallMs) * 100),
    machineCpuPct: Math.round((1 - (after.idle - machine.idle) / (after.total - machine.total)) * 100),
    cpuMsPaysagaProcess: round1((used.user + used.system) / 1e3 / n),
    cpuMsSandbox: round1((othersAfter.sandbox - others.sandbox) / n),
    cpuMsDevServer: round1((othersAfter.server - others.server) / n),
  };
}

/** One paysaga checkout: must end succeeded (the wait answers with the result). */
function paysagaCheckout(stack: PaysagaStack, expected: Map<string, number>, label: string) {
  return async (i: number) => {
    const amount = 1_000 + (i % 100_000);
    const view = await stack.payments.sessions.startCardCheckout(
      {
        reference: `bench-${label}-${i}-${stack.taskQueue.slice(-8)}`,
        amount: { amount, currency: 'RUB' },
        card: new CardDetails({
          card_number: FRICTIONLESS_CARD,
          card_exp_month: '12',
          card_exp_year: '30',
          card_code: '123',
        }),
        customer: { user_id: 'bench' },
      },
      { waitMs: WAIT_MS },
    );
    expected.set(view.sessionId, amount);
    if (view.phase !== 'succeeded')
      throw new Error(`session ${view.sessionId} answered ${view.phase} after ${WAIT_MS} ms, not succeeded`);
  };
}

export async function main(): Promise<void> {
  const n = Number(process.env.BENCH_N ?? 200);
  const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 20);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
  const warmup = Number(process.env.BENCH_WARMUP ?? 20);
  const profileDir = process.env.BENCH_CPU_PROF;
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const started = Date.now();
  const server = await startBenchServer();
  const closers: (() => Promise<unknown>)[] = [() => server.close()];
  const rows: Row[] = [];
  const ops: Record<Row['workflow'], Record<string, number>> = { floor: {}, paysaga: {} };
  let ledger = '';
  let webhooksPerCheckout = 0;
  let webhookOutcomes: Record<string, number> = {};
  try {
    console.error(`dev server ${server.address} up in ${Date.now() - started} ms (${server.cli})`);
    const [paysagaBundle, floorBundle] = await Promise.all([
      server.bundle('paysaga', workflowBundleOptions()),
      server.bundle('floor', { workflowsPath: require.resolve('./floor/workflows') }),
    ]);
    const { sandbox, publicPort } = await sandboxForApi(server);
    closers.push(() => sandbox.close());
    const stack = await startPaysaga(server, {
      bundlePath: paysagaBundle,
      sandbox,
      publicPort,
      settings: benchSettings(),
    });
    closers.push(() => stack.close());

    const floor = await startFloor({
      address: server.address,
      namespace: server.namespace,
      client: stack.temporal,
      bundlePath: floorBundle,
    });
    closers.push(() => floor.close());

    const expected = new Map<string, number>();
    // Warm-up: paysaga, counting the webhooks a checkout gets; then the floor.
    const hooksBefore = await webhooksReceived(stack);
    await runBounded(warmup, concurrency, paysagaCheckout(stack, expected, 'warmup'));
    await new Promise((r) => setTimeout(r, 1_000)); // the last webhooks of the warm-up
    const hooksAfter = await webhooksReceived(stack);
    const total = (h: Record<string, number>) => Object.values(h).reduce((a, b) => a + b, 0);
    webhooksPerCheckout = (total(hooksAfter) - total(hooksBefore)) / warmup;
    await runBounded(warmup, concurrency, (i) => floor.run(-1 - i));
    console.error(`warm-up done: ${webhooksPerCheckout} webhooks per checkout`);

    const [serverPid] = childPidsNamed('temporal');
    if (!serverPid) throw new Error('no dev server process among the children of this process');
    const pids: Pids = { sandbox: sandbox.process.pid, server: serverPid };
    const profiler = profileDir ? new Session() : undefined;
    if (profiler) {
      profiler.connect();
      await profiler.post('Profiler.enable');
    }
    for (let round = 1; round <= rounds; round++) {
      rows.push(await measure(server, pids, ops, round, 'floor', n, concurrency, (i) => floor.run(i)));
      console.error(`round ${round} floor: ${rows.at(-1)!.perSec}/s`);
      if (profiler) await profiler.post('Profiler.start');
      rows.push(
        await measure(
          server,
          pids,
          ops,
          round,
          'paysaga',
          n,
          concurrency,
          paysagaCheckout(stack, expected, `r${round}`),
        ),
      );
      if (profiler) {
        const { profile } = await profiler.post('Profiler.stop');
        fs.mkdirSync(profileDir!, { recursive: true });
        fs.writeFileSync(path.join(profileDir!, `checkouts-r${round}.cpuprofile`), JSON.stringify(profile));
      }
      console.error(`round ${round} paysaga: ${rows.at(-1)!.perSec}/s`);
    }
    profiler?.disconnect();
    await new Promise((r) => setTimeout(r, 1_000));
    webhookOutcomes = await webhooksReceived(stack);
    const res = await request(`${sandbox.url}/sandbox/ledger?project_id=bench`);
    const { entries } = (await res.body.json()) as { entries: LedgerEntry[] };
    ledger = checkLedger(entries, expected);
  } catch (err) {
    throw new Error(redactPans((err as Error).stack ?? String(err)));
  } finally {
    for (const c of closers.reverse()) await c().catch(() => undefined);
  }
  const sum = (w: Row['workflow']) => {
    const rs = rows.filter((r) => r.workflow === w);
    return rs.reduce((a, r) => a + r.checkouts, 0) / rs.reduce((a, r) => a + r.checkouts / r.perSec, 0);
  };
  console.log(machineLine());
  console.log(`checkouts per row ${n}, concurrency ${concurrency}, rounds ${rounds}`);
  console.table(rows);
  const floorRate = sum('floor');
  const paysaga = sum('paysaga');
  console.log(
    `paysaga ${round1(paysaga)}/s, floor ${round1(floorRate)}/s: ratio ${(paysaga / floorRate).toFixed(2)} (target >= 0.50)`,
  );
  console.log(
    `webhooks per paysaga checkout ${webhooksPerCheckout}; receiver outcomes ${JSON.stringify(webhookOutcomes)}`,
  );
  console.log(`ledger: ${ledger}`);
  // What each checkout cost the server, by operation (a count, so the load of the machine does not matter).
  const perCheckout = {
    paysaga: operationsPer({}, ops.paysaga, n * rounds),
    floor: operationsPer({}, ops.floor, n * rounds),
  };
  const names = [...new Set([...Object.keys(perCheckout.paysaga), ...Object.keys(perCheckout.floor)])];
  console.log('Temporal server requests per checkout (frontend, long polls left out):');
  console.table(
    Object.fromEntries(
      names.map((op) => [op, { paysaga: perCheckout.paysaga[op] ?? 0, floor: perCheckout.floor[op] ?? 0 }]),
    ),
  );
  const total = (o: Record<string, number>) => round1(Object.values(o).reduce((a, b) => a + b, 0));
  console.log(`total: paysaga ${total(perCheckout.paysaga)}, floor ${total(perCheckout.floor)}`);
}
