/**
 * The provider client against a local sandbox (in-process, fresh keys, 127.0.0.1): requests/s and
 * latency of `transaction/state` (a read) and `transaction/initiate` (a signed write with an
 * idempotency key), with the client as shipped (keep-alive undici Agent) and with a dispatcher that
 * opens a new connection per request (undici `pipelining: 0`), sequentially and 16 at a time.
 * Run: `npm run bench -- provider-client` (BENCH_N sets the requests per case).
 */
import { Agent } from 'undici';
import { ProviderClient } from '../provider';
import { startSandbox } from '../sandbox';
import { freshKeyPair, machineLine, percentile, round1, runBounded } from './support';

const PROJECT = 'bench';
/** Requests per endpoint and client before anything is measured (JIT, connection pool). */
const WARMUP = 500;

export interface ProviderClientRow {
  case: string;
  requests: number;
  reqPerSec: number;
  p50Ms: number;
  p95Ms: number;
  /** TCP connections the sandbox accepted during the measured requests. */
  connections: number;
}

export async function runProviderClientBench(n = 2_000, concurrency = 16): Promise<ProviderClientRow[]> {
  const partner = freshKeyPair();
  const service = freshKeyPair();
  const sandbox = await startSandbox({
    serviceKey: service.privatePem,
    projects: [{ id: PROJECT, publicKey: partner.publicPem, webhooks: false }],
  });
  let accepted = 0;
  sandbox.app.server.on('connection', () => accepted++);

  const common = {
    baseUrl: sandbox.url,
    projectId: PROJECT,
    privateKey: partner.privateKey,
    maxRetries: 0, // an error fails the benchmark instead of being retried away
  };
  const clients: { name: string; client: ProviderClient; dispatcher?: Agent }[] = [];
  clients.push({ name: 'keep-alive (as shipped)', client: new ProviderClient(common) });
  const fresh = new Agent({ pipelining: 0, connections: 64 }); // pipelining 0: no keep-alive
  clients.push({
    name: 'new connection per request',
    client: new ProviderClient({ ...common, dispatcher: fresh }),
    dispatcher: fresh,
  });

  const body = { sum_info: { sum: 10_000, currency_code: 'RUB' }, user_info: { user_id: 'bench' } };
  const seed = await clients[0]!.client.initiate(body, { idempotencyKey: 'bench-seed-initiate' });
  const sessionId = seed.session_info.id;
  let keys = 0;
  const endpoints: { name: string; call: (c: ProviderClient) => Promise<unknown> }[] = [
    { name: 'transaction/state', call: (c) => c.state({ session_id: sessionId }) },
    {
      name: 'transaction/initiate',
      call: (c) => c.initiate(body, { idempotencyKey: `bench-initiate-${++keys}` }),
    },
  ];

  const rows: ProviderClientRow[] = [];
  try {
    for (const ep of endpoints)
      for (const { client } of clients)
        await runBounded(WARMUP, concurrency, () => ep.call(client).then(() => undefined));
    for (const ep of endpoints) {
      for (const { name, client } of clients) {
        for (const c of [1, concurrency]) {
          const before = accepted;
          const { latenciesMs, wallMs } = await runBounded(n, c, () => ep.call(client).then(() => undefined));
          rows.push({
            case: `${ep.name}, ${name}, ${c === 1 ? 'sequential' : `concurrency ${c}`}`,
            requests: n,
            reqPerSec: Math.round((n / wallMs) * 1000),
            p50Ms: round1(percentile(latenciesMs, 50)),
            p95Ms: round1(percentile(latenciesMs, 95)),
            connections: accepted - before,
          });
        }
      }
    }
  } finally {
    for (const { client, dispatcher } of clients) {
      await client.close();
      await dispatcher?.close();
    }
    await sandbox.close();
  }
  return rows;
}

export async function main(): Promise<void> {
  const rows = await runProviderClientBench(Number(process.env.BENCH_N ?? 2_000));
  console.log(machineLine());
  console.table(rows);
}
