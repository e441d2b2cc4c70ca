/**
 * The pieces the end-to-end benchmarks share: one Temporal dev server (a process of its own), workflow
 * bundles built once, the sandbox as a `paysaga sandbox` process (the provider is another machine in
 * production: its CPU is not paysaga's), and paysaga itself in this process: the worker and the API's two
 * listeners (the sandbox's webhooks go to the public one, as in production), with the API's
 * PaymentsClient to start checkouts without HTTP.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import {
  bundleWorkflowCode,
  type BundleOptions,
  DefaultLogger,
  NativeConnection,
  type Worker,
  type WorkerOptions,
} from '@temporalio/worker';
import { request } from 'undici';
import { buildApi, type PaysagaApi } from '../../api/app';
import { PaymentsClient } from '../../client/payments-client';
import { DeferredReturnUrls, ReturnUrls } from '../../client/return-url';
import { mergeSettings, DEFAULT_SETTINGS, type SessionSettings } from '../../common/settings';
import { createWebhookVerifier, ProviderClient } from '../../provider';
import { startLocalTemporal, type LocalTemporal } from '../../test/helpers/local-temporal';
import { migrateStore, openStore, type Store } from '../../store/database';
import { startEmbeddedStore, type EmbeddedStore } from '../../store/embedded';
import { createPaysagaWorker } from '../../workers/worker';
import { freshKeyPair, type BenchKeyPair } from '../support';
import { freePort, startProbed, type ProbedProcess } from './processes';

const ROOT = path.resolve(__dirname, '..', '..');
export const BENCH_PROJECT = 'bench';

/** The dev server and a temp folder for bundles and configs; `close` removes both. */
export interface BenchServer {
  address: string;
  namespace: string;
  cli: string;
  tempDir: string;
  /**
   * Bundles workflow code once into the temp folder (paysaga's with workflowBundleOptions(), as the
   * worker does); returns the bundle's path.
   */
  bundle(name: string, options: Pick<BundleOptions, 'workflowsPath' | 'preloadModules'>): Promise<string>;
  /**
   * Requests the server's frontend has handled so far (every call of clients and workers), by gRPC
   * operation (its Prometheus counter `service_requests`), long polls left out: what a workload costs
   * the server, whatever the load of the machine.
   */
  operations(): Promise<Record<string, number>>;
  /** The embedded store (PGlite in this process, as `paysaga dev` runs it), shared by the run's stacks. */
  database: EmbeddedStore;
  /** A migrated schema of its own in the embedded store (closed with the server). */
  store(name: string): Promise<Store>;
  close(): Promise<void>;
}

export async function startBenchServer(): Promise<BenchServer> {
  const metricsPort = await freePort();
  const local: LocalTemporal = await startLocalTemporal({
    extraArgs: ['--metrics-port', String(metricsPort)],
  });
  const tempDir = fs.mkdtempSync(path.join(os.tmpdir(), 'paysaga-bench-'));
  const database = await startEmbeddedStore();
  const stores: Store[] = [];
  return {
    database,
    async store(name) {
      const store = openStore({ url: database.url, schema: name.replace(/[^a-z0-9_]/g, '_'), poolSize: 10 });
      await migrateStore(store);
      stores.push(store);
      return store;
    },
    address: local.env.address,
    namespace: local.namespace,
    cli: local.cli,
    tempDir,
    async bundle(name, options) {
      const { code } = await bundleWorkflowCode({ ...options, logger: new DefaultLogger('WARN') });
      const file = path.join(tempDir, `${name}-workflows.js`);
      fs.writeFileSync(file, code);
      return file;
    },
    async operations() {
      const res = await request(`http://127.0.0.1:${metricsPort}/metrics`);
      const text = await res.body.text();
      const out: Record<string, number> = {};
      for (const line of text.split('\n')) {
        if (!line.startsWith('service_requests{') || !line.includes('service_name="frontend"')) continue;
        const op = /operation="([^"]+)"/.exec(line)?.[1];
        if (!op || op.startsWith('Poll')) continue;
        out[op] = (out[op] ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1));
      }
      return out;
    },
    async close() {
      for (const store of stores) await store.close().catch(() => undefined);
      await database.stop().catch(() => undefined);
      await local.env.teardown();
      fs.rmSync(tempDir, { recursive: true, force: true });
    },
  };
}

/** `after - before` per operation, divided by `per`, largest first, zeros left out. */
export function operationsPer(
  before: Record<string, number>,
  after: Record<string, number>,
  per: number,
): Record<string, number> {
  const out: [string, number][] = [];
  for (const [op, n] of Object.entries(after)) {
    const d = (n - (before[op] ?? 0)) / per;
    if (d > 0) out.push([op, Math.round(d * 100) / 100]);
  }
  return Object.fromEntries(out.sort((a, b) => b[1] - a[1]));
}

/** The sandbox as its own process (`paysaga sandbox`), its flow steps 10 ms apart. */
export interface SandboxProcess {
  url: string;
  process: ProbedProcess;
  partner: BenchKeyPair;
  service: BenchKeyPair;
  close(): Promise<void>;
}

export async function startSandboxProcess(
  server: BenchServer,
  o: { webhookUrl?: string; webhooks: boolean },
): Promise<SandboxProcess> {
  const partner = freshKeyPair();
  const service = freshKeyPair();
  const config = path.join(server.tempDir, `sandbox-${randomUUID()}.json`);
  fs.writeFileSync(
    config,
    JSON.stringify({
      serviceKey: service.privatePem,
      projects: [
        {
          id: BENCH_PROJECT,
          publicKey: partner.publicPem,
          webhooks: o.webhooks,
          // The workflow approves (approval policy auto): a hold, then a capture, per checkout.
          autoApprove: false,
          hold: false,
          ...(o.webhookUrl ? { webhookUrl: o.webhookUrl } : {}),
        },
      ],
      // Steps of 10 ms as in the tests, but real time otherwise: a webhook attempt times out after 10 s,
      // not 250 ms (timeScale 0.01 would redeliver webhooks a loaded API answers late).
      stepMs: 10,
      timeScale: 1,
      // 3-D Secure pages nobody opens (bench/memory) stay open for the whole run.
      threeDsTtlSeconds: 24 * 3600,
    }),
    { mode: 0o600 },
  );
  const sandbox = startProbed(
    ROOT,
    ['sandbox', '--config', config, '--port', '0', '--log-level', 'error'],
    {},
  );
  await sandbox.waitForOutput('sandbox listening on ');
  const url = /sandbox listening on (\S+)/.exec(sandbox.output())![1]!;
  return { url, process: sandbox, partner, service, close: () => sandbox.stop() };
}

/**
 * Approval and finalization automatic; polling as in production (webhooks on, the provider's state read
 * only once an expected event is 30 s late), so a benchmark measures the webhook path, not a fallback.
 */
export function benchSettings(webhooks = true): SessionSettings {
  return mergeSettings(DEFAULT_SETTINGS, {
    approval: { mode: 'auto' },
    finalization: { mode: 'auto' },
    polling: { webhooks },
    deadlines: { payerActionMs: 24 * 3_600_000, sessionMs: 2 * 24 * 3_600_000, startMs: 15_000 },
  });
}

const HOUR = 3_600_000;

/**
 * For sessions left waiting for their payer: no webhook is due then, but the polling fallback still reads
 * the provider's state once an event is `lateAfterMs` late, then on a backoff up to `payerMaxMs`. With
 * the defaults (30 s, then backing off to every 4 minutes; 6 looks in the payer's 15 minutes) 10,000
 * waiting sessions read the provider about 67 times a second, a load of its own that these benchmarks
 * do not measure (`bench dev` does): here the first look comes after an
 * hour (the longest the settings allow), so during a run the sessions only wait.
 */
export function waitingSettings(): SessionSettings {
  return mergeSettings(benchSettings(), {
    polling: { lateAfterMs: HOUR, maxMs: HOUR },
    deadlines: { payerActionMs: 24 * HOUR },
  });
}

/** paysaga in this process: the worker (unless `worker: false`) and the API on two local listeners. */
export interface PaysagaStack {
  taskQueue: string;
  /** The API's Temporal client and PaymentsClient. */
  temporal: Client;
  payments: PaymentsClient;
  provider: ProviderClient;
  api: PaysagaApi;
  publicUrl: string;
  internalUrl: string;
  v1Url: string;
  apiToken: string;
  worker?: Worker;
  close(): Promise<void>;
}

export async function startPaysaga(
  server: BenchServer,
  o: {
    bundlePath: string;
    sandbox: SandboxProcess;
    /** Where the API's public listener must listen (the sandbox was told to post webhooks there). */
    publicPort: number;
    settings: SessionSettings;
    /** false: no worker here (a `paysaga worker` process runs the workflows). */
    worker?: boolean;
    tuning?: Pick<WorkerOptions, 'maxCachedWorkflows' | 'maxConcurrentWorkflowTaskExecutions'>;
    taskQueue?: string;
    /** The store's schema (a `paysaga worker` process given the same one shares the records). */
    schema?: string;
  },
): Promise<PaysagaStack> {
  const taskQueue = o.taskQueue ?? `bench-${randomUUID()}`;
  const closers: (() => Promise<unknown>)[] = [];
  const close = async () => {
    for (const c of closers.reverse()) await c().catch(() => undefined);
  };
  try {
    const provider = new ProviderClient({
      baseUrl: o.sandbox.url,
      projectId: BENCH_PROJECT,
      privateKey: o.sandbox.partner.privateKey,
      maxRetries: 0,
      timeoutMs: 30_000,
    });
    closers.push(() => provider.close());
    const connection = await Connection.connect({ address: server.address });
    closers.push(() => connection.close());
    const temporal = new Client({ connection, namespace: server.namespace });
    const store = await server.store(o.schema ?? `b_${randomUUID().slice(0, 8)}`);

    let worker: Worker | undefined;
    if (o.worker !== false) {
      const native = await NativeConnection.connect({ address: server.address });
      closers.push(() => native.close());
      const w = await createPaysagaWorker({
        connection: native,
        namespace: server.namespace,
        taskQueue,
        provider,
        verifyWebhook: createWebhookVerifier([o.sandbox.service.publicPem]),
        store,
        workflowBundlePath: o.bundlePath,
        ...(o.tuning ? { tuning: o.tuning } : {}),
      });
      const running = w.run();
      closers.push(async () => {
        w.shutdown();
        await running;
      });
      worker = w;
    }

    const returnSecrets = [randomBytes(32).toString('base64url')];
    const returnUrls = new DeferredReturnUrls();
    const payments = new PaymentsClient({
      temporal,
      provider,
      store,
      taskQueue,
      settings: o.settings,
      returnUrls,
    });
    const apiToken = `bench-${randomUUID()}`;
    const api = buildApi({
      payments,
      provider,
      temporal,
      taskQueue,
      settings: o.settings,
      store,
      verifyWebhook: createWebhookVerifier([o.sandbox.service.publicPem]),
      apiTokens: [apiToken],
      returnSecrets,
      // A benchmark's load comes from one address; a deployment sets PAYSAGA_PUBLIC_RATE_LIMIT for its
      // provider's senders.
      publicRateLimit: false,
    });
    const urls = await api.listen({
      public: { host: '127.0.0.1', port: o.publicPort },
      internal: { host: '127.0.0.1', port: 0 },
    });
    closers.push(() => api.close());
    returnUrls.resolve(new ReturnUrls(urls.publicUrl, returnSecrets));
    return {
      taskQueue,
      temporal,
      payments,
      provider,
      api,
      publicUrl: urls.publicUrl,
      internalUrl: urls.internalUrl,
      v1Url: `${urls.v1Url}/v1`,
      apiToken,
      ...(worker ? { worker } : {}),
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/** A sandbox process posting webhooks to a port the API of `startPaysaga` will then listen on. */
export async function sandboxForApi(
  server: BenchServer,
  webhooks = true,
): Promise<{ sandbox: SandboxProcess; publicPort: number }> {
  const publicPort = await freePort();
  const sandbox = await startSandboxProcess(server, {
    webhooks,
    webhookUrl: `http://127.0.0.1:${publicPort}/webhooks/provider`,
  });
  return { sandbox, publicPort };
}

/** Webhooks the API's receiver handled so far, by outcome (its Prometheus counter). */
export async function webhooksReceived(stack: PaysagaStack): Promise<Record<string, number>> {
  const res = await request(`${stack.internalUrl}/metrics`);
  const text = await res.body.text();
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^paysaga_webhooks_received_total\{outcome="([^"]+)"\} (\d+)/gm))
    out[m[1]!] = Number(m[2]);
  return out;
}
