/**
 * `paysaga dev` as a user runs it (one process: the sandbox, the embedded store, the worker and the API,
 * with the Temporal dev server as its child), measured through its HTTP API:
 *
 *   1. creating 3-D Secure card checkouts, `POST /v1/checkouts` with BENCH_CONCURRENCY (16) in flight:
 *      checkouts/s until BENCH_WAITING (1,000) sessions are waiting for their payer (nobody opens the
 *      3-D Secure page, so each stays a running workflow); a create answered before its redirect (its
 *      5 s wait ran out) is followed to it and counted;
 *   2. what the waiting sessions cost: the dev process's RSS after a full GC in each of its threads, and
 *      the heap of its main thread and of the SDK's workflow thread (lib/probe.js), and the Temporal
 *      server's RSS, before the first checkout and after the last, per session;
 *   3. reads with BENCH_STORE_SESSIONS (100,000) sessions in the store (the real ones, plus copies of a
 *      real session's record written by SQL): `GET /v1/sessions/{id}` of random sessions and 100-event
 *      pages of `GET /v1/events` walked with `starting_after`, one request at a time, p50/p99.
 *
 * The sandbox paces its flows (a 3-D Secure checkout reaches the payer's redirect two steps after its
 * start, 1000 ms each by default): BENCH_SANDBOX_STEP_MS sets `paysaga dev`'s PAYSAGA_DEV_SANDBOX_STEP_MS,
 * so a run can show what paysaga itself takes beside what the provider's pace takes.
 * Run: `npm run bench -- dev` (BENCH_WAITING, BENCH_CONCURRENCY, BENCH_STORE_SESSIONS, BENCH_READS,
 * BENCH_SANDBOX_STEP_MS).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { Pool } from 'undici';
import { redactPans } from '../provider';
import { TEST_CARD } from '../sandbox/test-cards';
import { openStore, type Store } from '../store/database';
import { readApiToken, readDevState } from '../cli/dev/data-dir';
import { cpuMsOf, rssOf, startProbed, type ThreadHeap } from './lib/processes';
import { machineLine, mib, percentile, round1, runBounded } from './support';

const ROOT = path.resolve(__dirname, '..');
const THREE_DS_CARD = TEST_CARD.visa3ds;

export async function main(): Promise<void> {
  const waiting = Number(process.env.BENCH_WAITING ?? 1_000);
  const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 16);
  const storeSessions = Number(process.env.BENCH_STORE_SESSIONS ?? 100_000);
  const reads = Number(process.env.BENCH_READS ?? 2_000);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'paysaga-bench-dev-'));
  const ports = [
    '--public-port',
    '--internal-port',
    '--sandbox-port',
    '--temporal-port',
    '--temporal-ui-port',
  ];
  const dev = startProbed(ROOT, ['dev', '--data', dataDir, ...ports.flatMap((p) => [p, '0'])], {
    PAYSAGA_LOG_LEVEL: 'error',
    ...(process.env.BENCH_SANDBOX_STEP_MS
      ? { PAYSAGA_DEV_SANDBOX_STEP_MS: process.env.BENCH_SANDBOX_STEP_MS }
      : {}),
  });
  let pool: Pool | undefined;
  try {
    await dev.waitForOutput('Ctrl-C stops everything', 300_000);
    const state = readDevState(dataDir)!;
    const token = readApiToken(dataDir)!;
    pool = new Pool(state.apiUrl, { connections: concurrency * 2 });
    const call = async (method: 'GET' | 'POST', p: string, body?: unknown) => {
      const res = await pool!.request({
        method,
        path: p,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      const text = await res.body.text();
      if (res.statusCode >= 300) throw new Error(`${method} ${p}: ${res.statusCode} ${redactPans(text)}`);
      return JSON.parse(text) as Record<string, unknown>;
    };
    const checkout = async (i: number, label: string) => {
      const view = await call('POST', '/v1/checkouts', {
        method: 'card',
        reference: `bench-${label}-${i}`,
        amount: { amount: 1_000 + i, currency: 'RUB' },
        card: { card_number: THREE_DS_CARD, card_exp_month: '12', card_exp_year: '30', card_code: '123' },
        customer: { user_id: `bench-${i % 50}` },
      });
      // A create answers when the redirect is there or its wait (5 s) runs out: one that ran out is
      // followed to its redirect, as a backend does, and counted. On the way it may be seen in a phase
      // paysaga passes by itself (the automatic approval the dev project asks for before 3-D Secure).
      let seen = view;
      if (seen.phase !== 'awaiting_payer') late++;
      while (seen.phase !== 'awaiting_payer' && seen.final !== true)
        seen = await call(
          'GET',
          `/v1/sessions/${String(seen.sessionId)}?wait=25000&after=${Number(seen.version)}`,
        );
      if (seen.phase !== 'awaiting_payer') throw new Error(`checkout ${i} ended ${String(seen.phase)}`);
    };
    let late = 0;

    // --- 1 and 2: checkouts waiting for their payer ---
    await runBounded(20, concurrency, (i) => checkout(i, 'warmup'));
    await sleep(2_000);
    const devBefore = await dev.memory();
    const threadsBefore = await dev.threads();
    const devRssBefore = rssOf(dev.pid);
    const temporalBefore = rssOf(state.temporalPid);
    const cpuBefore = { dev: cpuMsOf(dev.pid), temporal: cpuMsOf(state.temporalPid) };
    const made = await runBounded(waiting, concurrency, (i) => checkout(i, 'wait'));
    await sleep(5_000); // the last webhooks and records settle
    const devAfter = await dev.memory();
    const threadsAfter = await dev.threads();
    const devRssAfter = rssOf(dev.pid);
    const temporalAfter = rssOf(state.temporalPid);
    // CPU per creation (the settling included): steadier than the rate when the machine's load moves.
    const cpuPer = (after: number, before: number) => round1((after - before) / waiting);
    const cpu = {
      dev: cpuPer(cpuMsOf(dev.pid), cpuBefore.dev),
      temporal: cpuPer(cpuMsOf(state.temporalPid), cpuBefore.temporal),
    };

    // --- 3: reads with many sessions in the store ---
    const store = openStore({ url: state.databaseUrl!, schema: 'paysaga', poolSize: 2 });
    const real = await store.db
      .selectFrom('sessions')
      .select(['id', 'state'])
      .limit(1)
      .executeTakeFirstOrThrow();
    const have = Number(
      (
        await store.db
          .selectFrom('sessions')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
    const copies = Math.max(0, storeSessions - have);
    const filled = Date.now();
    // Copies of a real record under new ids and references, spread over 30 days, each with 3 events
    // (none when the checkouts made already fill BENCH_STORE_SESSIONS).
    if (copies > 0) await fillCopies(store, real.state, copies);
    await sql`analyze paysaga.sessions`.execute(store.db);
    await sql`analyze paysaga.events`.execute(store.db);
    const ids = (await store.db.selectFrom('sessions').select('id').execute()).map((r) => r.id);
    const sessions = ids.length;
    const events = Number(
      (
        await store.db
          .selectFrom('events')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
    const fillSeconds = round1((Date.now() - filled) / 1000);
    await store.close();

    await dev.loop(); // the reads' span starts here
    const sessionReads = await runBounded(reads, 1, async (i) => {
      await call('GET', `/v1/sessions/${ids[(i * 7919) % ids.length]}`);
    });
    let cursor: string | undefined;
    const pageReads = await runBounded(Math.min(reads, 500), 1, async () => {
      const page = await call('GET', `/v1/events?limit=100${cursor ? `&starting_after=${cursor}` : ''}`);
      const list = page.events as { id: string }[];
      if (list.length === 0 && !cursor) throw new Error('no events listed');
      // At the end of the feed, from the start again.
      cursor = list.length === 100 ? list.at(-1)!.id : undefined;
    });
    // What held the dev process up while the reads ran (its main thread serves them).
    const readsLoop = await dev.loop();

    console.log(machineLine());
    console.log(
      `paysaga dev (one process) with its Temporal dev server; sandbox steps ${process.env.BENCH_SANDBOX_STEP_MS ?? 1000} ms`,
    );
    console.table({
      [`create 3-D Secure checkouts, ${concurrency} in flight`]: {
        value: round1((waiting / made.wallMs) * 1000),
        unit: 'checkouts/s',
        target: '>= 15',
        p50: Math.round(percentile(made.latenciesMs, 50)),
        p99: Math.round(percentile(made.latenciesMs, 99)),
      },
      'CPU per creation (dev process, Temporal server)': {
        value: round1(cpu.dev + cpu.temporal),
        unit: 'ms',
        target: '',
        p50: `dev ${cpu.dev} ms`,
        p99: `Temporal ${cpu.temporal} ms`,
      },
      'answered before the redirect (followed to it)': {
        value: late,
        unit: 'checkouts',
        target: '',
        p50: '',
        p99: '',
      },
      [`dev process RSS per waiting session (${waiting})`]: {
        value: round1((devRssAfter - devRssBefore) / waiting / 1024),
        unit: 'KiB',
        target: '<= 300',
        p50: `${mib(devRssBefore)} -> ${mib(devRssAfter)} MiB`,
        p99: `heap ${mib(devBefore.heapUsed)} -> ${mib(devAfter.heapUsed)}, buffers ${mib(devBefore.arrayBuffers)} -> ${mib(devAfter.arrayBuffers)} MiB`,
      },
      [`workflow thread heap per waiting session (${waiting})`]: {
        value: round1((workflowHeap(threadsAfter) - workflowHeap(threadsBefore)) / waiting / 1024),
        unit: 'KiB',
        target: '',
        p50: `${mib(workflowHeap(threadsBefore))} -> ${mib(workflowHeap(threadsAfter))} MiB`,
        p99: '',
      },
      [`Temporal server RSS (${waiting} waiting)`]: {
        value: mib(temporalAfter),
        unit: 'MiB',
        target: '< 401 (today)',
        p50: `${mib(temporalBefore)} before`,
        p99: '',
      },
      [`GET /v1/sessions/{id}, ${sessions} sessions in the store`]: {
        value: round1(percentile(sessionReads.latenciesMs, 99)),
        unit: 'ms p99',
        target: '< 20',
        p50: round1(percentile(sessionReads.latenciesMs, 50)),
        p99: round1(percentile(sessionReads.latenciesMs, 99)),
      },
      [`GET /v1/events 100-event page, ${events} events`]: {
        value: round1(percentile(pageReads.latenciesMs, 99)),
        unit: 'ms p99',
        target: '< 50',
        p50: round1(percentile(pageReads.latenciesMs, 50)),
        p99: round1(percentile(pageReads.latenciesMs, 99)),
      },
    });
    console.log(`store filled with ${copies} copies and ${copies * 3} events in ${fillSeconds} s`);
    console.log(
      `dev process main thread during the reads: event-loop delay p50 ${readsLoop.delayP50Ms} ms, ` +
        `p99 ${readsLoop.delayP99Ms} ms, max ${readsLoop.delayMaxMs} ms; ${readsLoop.gcCount} GC pauses, ` +
        `${readsLoop.gcTotalMs} ms in all, the longest ${readsLoop.gcMaxMs} ms`,
    );
  } catch (err) {
    console.error(dev.output().slice(-4000));
    throw new Error(redactPans((err as Error).stack ?? String(err)));
  } finally {
    await pool?.close();
    await dev.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** `copies` copies of a real session's record under new ids and references, each with 3 events. */
async function fillCopies(store: Store, state: unknown, copies: number): Promise<void> {
  await sql`
    insert into paysaga.sessions (id, kind, reference, phase, final, needs_attention, amount, currency,
                                  customer_id, created_at, updated_at, version, state)
    select 'ps_9' || lpad(g::text, 9, '0'), 'card_checkout', 'bench-copy-' || g, 'succeeded', true, false,
           1000 + g % 5000, 'RUB', 'bench-' || (g % 50), now() - make_interval(secs => g * 26), now(), 5,
           jsonb_set(jsonb_set(${JSON.stringify(state)}::jsonb, '{sessionId}',
                               to_jsonb('ps_9' || lpad(g::text, 9, '0'))),
                     '{reference}', to_jsonb('bench-copy-' || g))
    from generate_series(1, ${copies}::int) g`.execute(store.db);
  await sql`
    with base as (select value as v from paysaga.counters where name = 'events' for update),
         rows as (
           insert into paysaga.events (seq, id, subject, sequence, type, created_at, data)
           select (select v from base) + g,
                  'evt_ps_9' || lpad(((g + 2) / 3)::text, 9, '0') || '_' || ((g - 1) % 3 + 1),
                  'ps_9' || lpad(((g + 2) / 3)::text, 9, '0'), (g - 1) % 3 + 1, 'session.created', now(), '{}'::jsonb
           from generate_series(1, ${copies * 3}::int) g
           returning seq)
    update paysaga.counters set value = (select max(seq) from rows) where name = 'events'`.execute(store.db);
}

/** The V8 heap of the Temporal SDK's workflow thread (where cached workflows live), bytes. */
function workflowHeap(threads: ThreadHeap[]): number {
  return threads.find((t) => t.url.includes('workflow-worker-thread'))?.usedSize ?? NaN;
}
