/**
 * Temporal calls per card checkout through the API, before and after the reshaped core, in one run
 * against one dev server and one sandbox. Each version runs as the real processes (`paysaga worker` and
 * `paysaga api` started from that version's TypeScript sources, configured by environment variables as
 * in production); lib/probe.js counts, inside the API process, every gRPC call its Temporal client makes
 * and the HTTP request it was made for. One session at a time, so nothing else is in flight:
 *
 *   card, frictionless, `POST /v1/checkouts?wait=5000`   (the default wait; answers with the result)
 *   card, frictionless, `POST /v1/checkouts`              (wait=0: answers at once)
 *   card, 3-D Secure,   `POST /v1/checkouts?wait=5000`   (answers awaiting_payer with the redirect)
 *
 * and, for each, the provider's webhooks for that session as the API's receiver handled them.
 * Run: `npm run bench -- calls` (BENCH_BEFORE_ROOT: the checkout of the old code, default
 * /tmp/paysaga-before, made with `git worktree add /tmp/paysaga-before ac2e2a2` and a node_modules
 * symlink; missing: only "after" is measured).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { bundleWorkflowCode, DefaultLogger, Runtime } from '@temporalio/worker';
import { request } from 'undici';
import { startSandbox } from '../sandbox';
import { startEmbeddedStore } from '../store/embedded';
import { startLocalTemporal } from '../test/helpers/local-temporal';
import { freePort, startProbed, waitForHttp, type ProbedProcess, type ServedRequest } from './lib/processes';
import { freshKeyPair, machineLine } from './support';
import { TEST_CARD } from '../sandbox/test-cards';

const PROJECT = 'bench';
const FRICTIONLESS = TEST_CARD.visa;
const THREE_DS = TEST_CARD.visa3ds;
const TOKEN = `bench-${randomUUID()}`;
const AFTER_ROOT = path.resolve(__dirname, '..');

interface Version {
  name: 'before' | 'after';
  root: string;
}

/** A webhook the sandbox sent, as the API answered it. */
interface Delivered {
  sessionId: string;
  type: string;
  status: number;
}

interface CaseResult {
  version: string;
  case: string;
  phase: string;
  /** gRPC methods of the creating request, in order. */
  createCalls: string[];
  webhooks: number;
  /** Each webhook of the session: type and the API's answer. */
  webhookAnswers: string;
  /** gRPC methods of all webhook requests of the session, summed by method. */
  webhookCalls: Record<string, number>;
}

const summarize = (calls: string[]) => {
  const by: Record<string, number> = {};
  for (const c of calls) by[c] = (by[c] ?? 0) + 1;
  return Object.entries(by)
    .map(([m, n]) => (n > 1 ? `${m} x${n}` : m))
    .join(', ');
};

async function http(method: 'GET' | 'POST', url: string, body?: unknown) {
  const res = await request(url, {
    method,
    headers: {
      authorization: `Bearer ${TOKEN}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    headersTimeout: 60_000,
    bodyTimeout: 60_000,
  });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${text.slice(0, 500)}`);
  return JSON.parse(text) as { sessionId: string; phase: string; final?: boolean };
}

const FINAL = new Set(['succeeded', 'failed', 'canceled']);

async function runVersion(
  v: Version,
  deps: {
    address: string;
    namespace: string;
    sandboxUrl: string;
    partnerPem: string;
    servicePublicPem: string;
    forwardTo: (url: string | undefined) => void;
    delivered: Delivered[];
    tempDir: string;
    /** The store the worker and the API keep their records in (code from before the store ignores it). */
    databaseUrl: string;
  },
): Promise<CaseResult[]> {
  const bundlePath = path.join(deps.tempDir, `${v.name}-workflows.js`);
  const { code } = await bundleWorkflowCode({
    workflowsPath: path.join(v.root, 'workflows', 'index.ts'),
    logger: new DefaultLogger('WARN'),
  });
  fs.writeFileSync(bundlePath, code);
  const taskQueue = `bench-calls-${v.name}-${randomUUID()}`;
  const common = {
    TEMPORAL_ADDRESS: deps.address,
    TEMPORAL_NAMESPACE: deps.namespace,
    TEMPORAL_CONFIG_FILE: '',
    PAYSAGA_TASK_QUEUE: taskQueue,
    PAYSAGA_PROVIDER_URL: deps.sandboxUrl,
    PAYSAGA_PROJECT_ID: PROJECT,
    PAYSAGA_PARTNER_PRIVATE_KEY: deps.partnerPem,
    PAYSAGA_PROVIDER_TEST_SERVICE_KEYS: deps.servicePublicPem,
    PAYSAGA_LOG_LEVEL: 'warn',
    PAYSAGA_ALLOW_UNENCRYPTED: 'true',
    PAYSAGA_DATABASE_URL: deps.databaseUrl,
  };
  const twoListeners = fs.existsSync(path.join(v.root, 'api', 'listen-config.ts'));
  const publicPort = await freePort();
  const internalPort = twoListeners ? await freePort() : publicPort;
  const publicUrl = `http://127.0.0.1:${publicPort}`;
  const v1Url = `http://127.0.0.1:${internalPort}/v1`;
  const apiEnv: Record<string, string> = twoListeners
    ? {
        PAYSAGA_PUBLIC_PORT: String(publicPort),
        PAYSAGA_INTERNAL_PORT: String(internalPort),
        PAYSAGA_PUBLIC_URL: publicUrl,
        PAYSAGA_RETURN_SECRETS: randomBytes(32).toString('base64url'),
      }
    : { PAYSAGA_API_PORT: String(publicPort) };

  const processes: ProbedProcess[] = [];
  try {
    const worker = startProbed(v.root, ['worker'], {
      ...common,
      PAYSAGA_WORKFLOW_BUNDLE: bundlePath,
      PAYSAGA_LOG_LEVEL: 'info',
    });
    processes.push(worker);
    const api = startProbed(v.root, ['api'], { ...common, PAYSAGA_API_TOKENS: TOKEN, ...apiEnv });
    processes.push(api);
    await worker.waitForOutput('worker polling');
    await waitForHttp(`http://127.0.0.1:${internalPort}/healthz`);
    deps.forwardTo(`${publicUrl}/webhooks/provider`);
    await api.calls(); // start from an empty record

    const cases: { name: string; card: string; wait: number }[] = [
      { name: 'card frictionless, ?wait=5000', card: FRICTIONLESS, wait: 5_000 },
      { name: 'card frictionless, no wait', card: FRICTIONLESS, wait: 0 },
      { name: 'card 3-D Secure, ?wait=5000', card: THREE_DS, wait: 5_000 },
    ];
    // One warm-up checkout first: the first request of a process pays for lazy loading.
    const results: CaseResult[] = [];
    for (const [i, c] of [cases[0]!, ...cases].entries()) {
      const created = await http('POST', `${v1Url}/checkouts?wait=${c.wait}`, {
        method: 'card',
        reference: `bench-calls-${v.name}-${i}-${randomUUID().slice(0, 8)}`,
        amount: { amount: 1_000 + i, currency: 'RUB' },
        card: { card_number: c.card, card_exp_month: '12', card_exp_year: '30', card_code: '123' },
        customer: { user_id: 'bench' },
      });
      let phase = created.phase;
      if (c.card === FRICTIONLESS) {
        for (let tries = 0; !FINAL.has(phase); tries++) {
          if (tries > 300) throw new Error(`${v.name}: session ${created.sessionId} not final: ${phase}`);
          await new Promise((r) => setTimeout(r, 100));
          phase = (await http('GET', `${v1Url}/sessions/${created.sessionId}`)).phase;
        }
        if (phase !== 'succeeded') throw new Error(`${v.name}: ${created.sessionId} ended ${phase}`);
      }
      // Webhooks still on their way (10 ms steps in the sandbox) arrive meanwhile.
      await new Promise((r) => setTimeout(r, 1_500));
      const { requests } = await api.calls();
      if (i === 0) continue;
      const create = requests.find((r) => r.method === 'POST' && r.path.endsWith('/v1/checkouts'));
      if (!create) throw new Error(`${v.name}: the API served no POST /v1/checkouts`);
      const hooks = requests.filter((r: ServedRequest) => r.path === '/webhooks/provider');
      const webhookCalls: Record<string, number> = {};
      for (const h of hooks) for (const m of h.calls) webhookCalls[m] = (webhookCalls[m] ?? 0) + 1;
      results.push({
        version: v.name,
        case: c.name,
        phase: c.card === FRICTIONLESS ? `${created.phase} -> ${phase}` : created.phase,
        createCalls: create.calls,
        webhooks: hooks.length,
        webhookAnswers: deps.delivered
          .filter((d) => d.sessionId === created.sessionId)
          .map((d) => `${d.type} ${d.status}`)
          .join(', '),
        webhookCalls,
      });
    }
    return results;
  } finally {
    deps.forwardTo(undefined);
    for (const p of processes.reverse()) await p.stop();
  }
}

export async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const beforeRoot = process.env.BENCH_BEFORE_ROOT ?? '/tmp/paysaga-before';
  const versions: Version[] = [];
  if (fs.existsSync(path.join(beforeRoot, 'cli', 'main.ts')))
    versions.push({ name: 'before', root: beforeRoot });
  else console.error(`no checkout of the old code at ${beforeRoot}: measuring "after" only`);
  versions.push({ name: 'after', root: AFTER_ROOT });

  const partner = freshKeyPair();
  const service = freshKeyPair();
  const { env, namespace, cli } = await startLocalTemporal();
  const tempDir = fs.mkdtempSync(path.join(os.tmpdir(), 'paysaga-bench-calls-'));
  // PGlite served on a local port, as `paysaga dev` runs it; each process migrates it as it starts.
  const store = await startEmbeddedStore();
  // The sandbox's webhooks go to the API under test (verified and signaled there, as in production).
  let forward: string | undefined;
  const delivered: Delivered[] = [];
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (!forward) return void res.writeHead(503).end();
      const raw = Buffer.concat(chunks);
      const event = JSON.parse(raw.toString()) as { type?: string; session_info?: { id?: string } };
      request(forward, {
        method: 'POST',
        body: raw,
        headers: {
          'content-type': req.headers['content-type'] ?? 'application/json',
          ...(req.headers['x-signature'] ? { 'x-signature': String(req.headers['x-signature']) } : {}),
        },
      }).then(
        async (r) => {
          await r.body.dump();
          delivered.push({
            sessionId: event.session_info?.id ?? '?',
            type: event.type ?? '?',
            status: r.statusCode,
          });
          res.writeHead(r.statusCode).end();
        },
        () => res.writeHead(502).end(),
      );
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const sandbox = await startSandbox({
    serviceKey: service.privatePem,
    projects: [
      {
        id: PROJECT,
        publicKey: partner.publicPem,
        webhooks: true,
        webhookUrl: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks/provider`,
      },
    ],
    timeScale: 0.01,
  });
  const rows: CaseResult[] = [];
  try {
    console.error(
      `dev server ${env.address} (${cli}); versions: ${versions.map((v) => `${v.name} ${v.root}`).join(', ')}`,
    );
    for (const v of versions) {
      const t = Date.now();
      rows.push(
        ...(await runVersion(v, {
          address: env.address,
          namespace,
          sandboxUrl: sandbox.url,
          partnerPem: partner.privatePem,
          servicePublicPem: service.publicPem,
          forwardTo: (url) => (forward = url),
          delivered,
          tempDir,
          databaseUrl: store.url,
        })),
      );
      console.error(`${v.name} done in ${Date.now() - t} ms`);
    }
  } finally {
    await sandbox.close();
    await store.stop();
    await new Promise<void>((r) => {
      receiver.closeAllConnections();
      receiver.close(() => r());
    });
    await env.teardown();
    fs.rmSync(tempDir, { recursive: true, force: true });
  }
  console.log(machineLine());
  console.table(
    rows.map((r) => ({
      version: r.version,
      case: r.case,
      phase: r.phase,
      'calls of the request': r.createCalls.length,
      methods: summarize(r.createCalls),
      webhooks: r.webhooks,
      'webhooks (type, answer)': r.webhookAnswers,
      'calls per webhook': r.webhooks
        ? Object.values(r.webhookCalls).reduce((a, b) => a + b, 0) / r.webhooks
        : 0,
      'webhook methods (all)': summarize(
        Object.entries(r.webhookCalls).flatMap(([m, n]) => Array(n).fill(m)),
      ),
    })),
  );
}
