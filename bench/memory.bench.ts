/**
 * Worker memory with many card sessions waiting for their payer. The worker runs as the real process
 * (`paysaga worker` from this worktree's sources, configured by environment variables as in production,
 * lib/probe.js preloaded to read its memory after a full GC); the API's PaymentsClient in this process
 * starts 3-D Secure checkouts until BENCH_SESSIONS of them are `awaiting_payer` (each a running session
 * workflow with its reference), and the sandbox (its own process) sends their
 * webhooks to the API's public listener here. The worker's RSS is read from /proc at checkpoints while
 * the sessions are made and again after they are all waiting; nobody opens a 3-D Secure page, so every
 * session stays waiting (deadline a day away, first poll of the provider an hour away: lib/stack.ts
 * `waitingSettings`) until the run ends.
 * Run: `npm run bench -- memory` (BENCH_SESSIONS, default 10000; BENCH_CONCURRENCY in flight, default
 * 40; BENCH_MAX_MINUTES, default 40, bounds the making of sessions; PAYSAGA_MAX_CACHED_WORKFLOWS is
 * passed on to the worker when set).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { CardDetails, redactPans } from '../provider';
import { DEFAULT_MAX_CACHED_WORKFLOWS } from '../workers/tuning';
import { BENCH_PROJECT, sandboxForApi, startBenchServer, startPaysaga, waitingSettings } from './lib/stack';
import { rssOf, startProbed } from './lib/processes';
import { machineLine, mib, round1, runBounded } from './support';
import { TEST_CARD } from '../sandbox/test-cards';
import { workflowBundleOptions } from '../workers/workflow-bundle-options';

const THREE_DS_CARD = TEST_CARD.visa3ds;
const ROOT = path.resolve(__dirname, '..');

/** Peak RSS of a process (VmHWM) from /proc, in bytes. */
function peakRssOf(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+)\s+kB/.exec(status)?.[1] ?? NaN) * 1024;
}

interface Checkpoint {
  waiting: number;
  'worker RSS MiB': number;
  'seconds since start': number;
  'sessions/s (since last)': number;
}

export async function main(): Promise<void> {
  const target = Number(process.env.BENCH_SESSIONS ?? 10_000);
  const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 40);
  // Bounded: sessions are made for at most this long; fewer than BENCH_SESSIONS then are reported as such.
  const maxMinutes = Number(process.env.BENCH_MAX_MINUTES ?? 40);
  const warmup = 20;
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const server = await startBenchServer();
  const closers: (() => Promise<unknown>)[] = [() => server.close()];
  const checkpoints: Checkpoint[] = [];
  let summary: string[] = [];
  try {
    const bundle = await server.bundle('paysaga', workflowBundleOptions());
    const { sandbox, publicPort } = await sandboxForApi(server);
    closers.push(() => sandbox.close());
    const taskQueue = `bench-memory-${randomUUID()}`;
    const cache = process.env.PAYSAGA_MAX_CACHED_WORKFLOWS;
    // The worker process keeps its records in this run's embedded store, in the schema the API here uses.
    const schema = `b_memory_${randomUUID().slice(0, 8)}`;
    const worker = startProbed(ROOT, ['worker'], {
      TEMPORAL_ADDRESS: server.address,
      TEMPORAL_NAMESPACE: server.namespace,
      TEMPORAL_CONFIG_FILE: '',
      PAYSAGA_TASK_QUEUE: taskQueue,
      PAYSAGA_PROVIDER_URL: sandbox.url,
      PAYSAGA_PROJECT_ID: BENCH_PROJECT,
      PAYSAGA_PARTNER_PRIVATE_KEY: sandbox.partner.privatePem,
      PAYSAGA_WORKFLOW_BUNDLE: bundle,
      PAYSAGA_RETURN_SECRETS: randomBytes(32).toString('base64url'),
      PAYSAGA_LOG_LEVEL: 'warn',
      PAYSAGA_ALLOW_UNENCRYPTED: 'true',
      PAYSAGA_DATABASE_URL: server.database.url,
      PAYSAGA_DATABASE_SCHEMA: schema,
      ...(cache !== undefined ? { PAYSAGA_MAX_CACHED_WORKFLOWS: cache } : {}),
    });
    closers.push(() => worker.stop());
    // No "worker polling" line at level warn: the first checkout shows the worker is up.
    const stack = await startPaysaga(server, {
      bundlePath: bundle,
      sandbox,
      publicPort,
      settings: waitingSettings(),
      worker: false,
      schema,
      taskQueue,
    });
    closers.push(() => stack.close());

    let made = 0;
    const failed: string[] = [];
    let stopAt = Infinity;
    const checkout = (label: string) => async (i: number) => {
      if (Date.now() > stopAt) return;
      let view;
      try {
        view = await stack.payments.sessions.startCardCheckout(
          {
            reference: `bench-mem-${label}-${i}-${taskQueue.slice(-8)}`,
            amount: { amount: 1_000 + (i % 100_000), currency: 'RUB' },
            card: new CardDetails({
              card_number: THREE_DS_CARD,
              card_exp_month: '12',
              card_exp_year: '30',
              card_code: '123',
            }),
            customer: { user_id: 'bench' },
          },
          { waitMs: 30_000 },
        );
      } catch (err) {
        // A slow machine may time a start out: counted, and the run goes on (the server's count of
        // running workflows below tells what was made).
        failed.push(redactPans(String((err as Error).message ?? err)).slice(0, 200));
        return;
      }
      if (view.phase !== 'awaiting_payer')
        throw new Error(`${view.sessionId} is ${view.phase}, not awaiting_payer`);
      made++;
    };
    await runBounded(warmup, Math.min(concurrency, warmup), checkout('warmup'));
    await new Promise((r) => setTimeout(r, 2_000));
    const base = { rss: rssOf(worker.pid), after: await worker.memory() };
    console.error(`worker up; after ${warmup} sessions: RSS ${mib(base.rss)} MiB`);

    const started = Date.now();
    stopAt = started + maxMinutes * 60_000;
    const every = Math.max(1, Math.floor(target / 10));
    let last = { at: started, made: 0 };
    const timer = setInterval(() => {
      if (made - warmup - last.made < every) return;
      const now = Date.now();
      const waiting = made - warmup;
      checkpoints.push({
        waiting,
        'worker RSS MiB': mib(rssOf(worker.pid)),
        'seconds since start': Math.round((now - started) / 1000),
        'sessions/s (since last)': round1(((waiting - last.made) / (now - last.at)) * 1000),
      });
      console.error(JSON.stringify(checkpoints.at(-1)));
      last = { at: now, made: waiting };
    }, 250);
    try {
      await runBounded(target, concurrency, checkout('m'));
    } finally {
      clearInterval(timer);
    }
    const wallS = (Date.now() - started) / 1000;
    // The last webhooks and event deliveries of the last sessions settle.
    await new Promise((r) => setTimeout(r, 10_000));
    const rss = rssOf(worker.pid);
    const memory = await worker.memory();
    const rssAfterGc = rssOf(worker.pid);
    const peak = peakRssOf(worker.pid);
    // Every session is a running workflow still: count them on the server.
    const running = await stack.temporal.workflow.count(
      `TaskQueue = '${taskQueue}' AND ExecutionStatus = 'Running'`,
    );
    const waiting = made - warmup;
    checkpoints.push({
      waiting,
      'worker RSS MiB': mib(rss),
      'seconds since start': Math.round(wallS + 10),
      'sessions/s (since last)': NaN,
    });
    summary = [
      `${waiting} sessions awaiting the payer (plus ${warmup} warm-up) made in ${round1(wallS)} s ` +
        `(${round1(waiting / wallS)}/s, concurrency ${concurrency})` +
        (waiting < target ? `: NOT the ${target} asked for, stopped after ${maxMinutes} min` : '') +
        `; running workflows on the task queue: ${running.count}; starts that failed: ${failed.length}` +
        (failed.length ? ` (first: ${failed[0]})` : ''),
      `worker RSS: ${mib(base.rss)} MiB after the warm-up -> ${mib(rss)} MiB with all waiting ` +
        `(${mib(rssAfterGc)} MiB after a full GC; peak ${mib(peak)} MiB); target < 1024 MiB with ${target}: ` +
        `${waiting < target ? 'not measured' : rss < 2 ** 30 && peak < 2 ** 30 ? 'met' : 'NOT met'}`,
      `worker heap after GC: ${mib(base.after.heapUsed)} -> ${mib(memory.heapUsed)} MiB used, ` +
        `${mib(memory.heapTotal)} MiB total; external ${mib(memory.external)} MiB, array buffers ` +
        `${mib(memory.arrayBuffers)} MiB; growth per waiting session ` +
        `${round1((rss - base.rss) / waiting / 1024)} KiB RSS`,
      `maxCachedWorkflows: ${cache ?? `${DEFAULT_MAX_CACHED_WORKFLOWS} (paysaga's default)`}`,
    ];
  } catch (err) {
    throw new Error(redactPans((err as Error).stack ?? String(err)));
  } finally {
    for (const c of closers.reverse()) await c().catch(() => undefined);
  }
  console.log(machineLine());
  console.table(checkpoints);
  for (const line of summary) console.log(line);
}
