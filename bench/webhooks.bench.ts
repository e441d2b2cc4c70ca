/**
 * Webhooks through the API against bare `signal()` calls, same running workflows, same dev server, same
 * run. K 3-D Secure checkouts are left waiting for their payer (running session workflows). Then, in
 * alternating rows:
 *
 *   bare signal()  `handle.signal(providerEvent, delivery)` from the API's own Temporal client, with the
 *                  signed body and signature the API would signal: the floor
 *   through API   `POST /webhooks/provider` on the API's public listener, each body signed with the
 *                  sandbox's service key (RSA SHA-256, signed before the row: signing is the provider's
 *                  work): verified, parsed, routed and signaled by paysaga as in production
 *
 * Every event is the session's own current state, so each session records it (a duplicate) and changes
 * nothing else; both rows deliver the same payloads to the same workflows. The API and the worker run in
 * this process, the sandbox and the dev server in their own.
 * Run: `npm run bench -- webhooks` (BENCH_N deliveries per row, BENCH_SESSIONS sessions,
 * BENCH_CONCURRENCY in flight, BENCH_ROUNDS rounds).
 */
import { randomUUID } from 'node:crypto';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { Pool } from 'undici';
import { providerEventSignal } from '../common/messages';
import { CardDetails, redactPans, signBytes } from '../provider';
import type { WebhookEvent } from '../provider/schemas';
import { sandboxForApi, startBenchServer, startPaysaga, waitingSettings } from './lib/stack';
import { machineLine, percentile, round1, runBounded } from './support';
import { TEST_CARD } from '../sandbox/test-cards';
import type { ProviderEventDelivery } from '../common/session-input';
import { workflowBundleOptions } from '../workers/workflow-bundle-options';

const THREE_DS_CARD = TEST_CARD.visa3ds;

interface Row {
  round: number;
  path: 'bare signal()' | 'through API';
  deliveries: number;
  perSec: number;
  p50Ms: number;
  p95Ms: number;
  processCpuPct: number;
}

export async function main(): Promise<void> {
  const n = Number(process.env.BENCH_N ?? 2_000);
  const sessions = Number(process.env.BENCH_SESSIONS ?? 100);
  const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 20);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const server = await startBenchServer();
  const closers: (() => Promise<unknown>)[] = [() => server.close()];
  const rows: Row[] = [];
  const answers: Record<string, number> = {};
  try {
    const bundle = await server.bundle('paysaga', workflowBundleOptions());
    const { sandbox, publicPort } = await sandboxForApi(server);
    closers.push(() => sandbox.close());
    const stack = await startPaysaga(server, {
      bundlePath: bundle,
      sandbox,
      publicPort,
      settings: waitingSettings(),
    });
    closers.push(() => stack.close());

    // Sessions waiting for their payer, and each one's current state as the provider shows it.
    const ids: string[] = [];
    await runBounded(sessions, concurrency, async (i) => {
      const view = await stack.payments.sessions.startCardCheckout(
        {
          reference: `bench-hooks-${i}-${randomUUID().slice(0, 8)}`,
          amount: { amount: 1_000 + i, currency: 'RUB' },
          card: new CardDetails({
            card_number: THREE_DS_CARD,
            card_exp_month: '12',
            card_exp_year: '30',
            card_code: '123',
          }),
          customer: { user_id: 'bench' },
        },
        { waitMs: 10_000 },
      );
      if (view.phase !== 'awaiting_payer')
        throw new Error(`${view.sessionId} is ${view.phase}, not awaiting_payer`);
      ids.push(view.sessionId);
    });
    const events: WebhookEvent[] = [];
    for (const id of ids) {
      const { session_info } = await stack.provider.state({ session_id: id });
      events.push({ type: 'checkout_results', session_info } as WebhookEvent);
    }
    // Signed once each, as the provider would (its CPU, not paysaga's).
    const signed = events.map((e) => {
      const body = Buffer.from(JSON.stringify(e));
      return { body, signature: signBytes(body, sandbox.service.privateKey) };
    });
    const pool = new Pool(stack.publicUrl, { connections: concurrency, pipelining: 1 });
    closers.push(() => pool.close());
    console.error(`${ids.length} sessions awaiting their payer; ${n} deliveries per row`);

    const bare = async (i: number) => {
      const { body, signature } = signed[i % signed.length]!;
      // What the API signals for the same webhook (client/webhook-router.ts): the signed bytes, which
      // the session verifies again before it believes them (docs/decisions/016-results-are-proven.md).
      const delivery: ProviderEventDelivery = {
        receivedAt: new Date().toISOString(),
        via: 'webhook',
        signed: { body: body.toString('utf8'), signature },
      };
      const sessionId = events[i % events.length]!.session_info.id;
      await stack.temporal.workflow.getHandle(sessionId).signal(providerEventSignal, delivery);
    };
    const viaApi = async (i: number) => {
      const { body, signature } = signed[i % signed.length]!;
      const res = await pool.request({
        path: '/webhooks/provider',
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', 'x-signature': signature },
      });
      await res.body.dump();
      answers[res.statusCode] = (answers[res.statusCode] ?? 0) + 1;
      if (res.statusCode !== 200) throw new Error(`the API answered ${res.statusCode} to a webhook`);
    };
    // Warm-up of both paths.
    await runBounded(200, concurrency, bare);
    await runBounded(200, concurrency, viaApi);
    for (let round = 1; round <= rounds; round++) {
      for (const [path, task] of [
        ['bare signal()', bare],
        ['through API', viaApi],
      ] as const) {
        const cpu = process.cpuUsage();
        const { latenciesMs, wallMs } = await runBounded(n, concurrency, task);
        const used = process.cpuUsage(cpu);
        rows.push({
          round,
          path,
          deliveries: n,
          perSec: round1((n / wallMs) * 1000),
          p50Ms: round1(percentile(latenciesMs, 50)),
          p95Ms: round1(percentile(latenciesMs, 95)),
          processCpuPct: Math.round(((used.user + used.system) / 1e3 / wallMs) * 100),
        });
        console.error(`round ${round} ${path}: ${rows.at(-1)!.perSec}/s`);
      }
    }
    // Every session is still waiting for its payer: the deliveries changed nothing but the audit trail.
    for (const id of ids.slice(0, 10)) {
      const view = await stack.payments.sessions.get(id);
      if (view.phase !== 'awaiting_payer') throw new Error(`${id} moved to ${view.phase}`);
    }
  } catch (err) {
    throw new Error(redactPans((err as Error).stack ?? String(err)));
  } finally {
    for (const c of closers.reverse()) await c().catch(() => undefined);
  }
  const rate = (p: Row['path']) => {
    const rs = rows.filter((r) => r.path === p);
    return rs.reduce((a, r) => a + r.deliveries, 0) / rs.reduce((a, r) => a + r.deliveries / r.perSec, 0);
  };
  console.log(machineLine());
  console.log(
    `deliveries per row ${n} to ${sessions} sessions, concurrency ${concurrency}, rounds ${rounds}`,
  );
  console.table(rows);
  const api = rate('through API');
  const bare = rate('bare signal()');
  console.log(
    `through API ${round1(api)}/s, bare signal() ${round1(bare)}/s: ratio ${(api / bare).toFixed(2)} (target >= 0.80)`,
  );
  console.log(`API answers: ${JSON.stringify(answers)}`);
}
