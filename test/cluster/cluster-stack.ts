/**
 * Everything the cluster test runs, each part a real process, stopped by the Teardown it is given:
 *
 *  - the cluster: PostgreSQL (test/cluster/postgres.ts) and `temporal-server` (temporal-server.ts) in a
 *    temp folder, or, when PAYSAGA_CLUSTER_ADDRESS is set, that cluster as it is (nothing started; the
 *    standard TEMPORAL_* connection variables of the environment, TLS or API key, pass through);
 *  - paysaga's store: a database of its own (`paysaga`) on the same PostgreSQL server (or on
 *    PAYSAGA_CLUSTER_DATABASE_URL with an external cluster, else a local PostgreSQL of its own);
 *  - paysaga registered on it by `paysaga setup` (namespace, search attributes and the store's
 *    migrations: registerPaysaga in temporal-admin.ts);
 *  - `paysaga sandbox` with fresh RSA keys, two `paysaga worker` and two `paysaga api` processes on one
 *    task queue, configured only by environment variables as a deployment would. Each API has its two
 *    listeners: the test's client calls `/v1` on the internal ones, the sandbox's webhooks go to the
 *    public one of the first API, and payers return through the public listeners with signed links.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { workflowBundleOptions } from '../../workers/workflow-bundle-options';
import { buildIdOf, type WorkerVersion } from '../../workers/versioning';
import { freePort } from '../../cli/dev/ports';
import { generateTestKeys } from '../helpers/keys';
import { spawnPaysaga, withoutCardNumbers, PAYSAGA_BIN, type PaysagaProcess } from './paysaga-process';
import { createDatabase, startPostgres, type Postgres } from './postgres';
import { mustRun } from './run';
import type { Teardown } from './teardown';
import {
  registerPaysaga,
  waitForHealthy,
  waitForSearchAttributes,
  type ClusterTarget,
  type Registration,
} from './temporal-admin';
import {
  binaryVersion,
  setupSchemas,
  startTemporalServer,
  temporalServerBinaries,
  type TemporalServer,
} from './temporal-server';

export const CLUSTER_NAMESPACE = 'paysaga-cluster';
const PROJECT_ID = 'cluster-shop';
const HOST = '127.0.0.1';

export interface Cluster {
  target: ClusterTarget;
  /** Started here (not PAYSAGA_CLUSTER_ADDRESS). */
  local?: { postgres: Postgres; server: TemporalServer; serverVersion: string; sqlToolVersion: string };
  /** The test's temp folder (config files, logs, keys, workflow bundle); removed at teardown. */
  dir: string;
  timings: Record<string, number>;
  /** What the first `paysaga setup` did. */
  registration: Registration;
  /** paysaga's store (PAYSAGA_DATABASE_URL of every paysaga process; schema `paysaga`). */
  storeUrl: string;
}

const STORE_DATABASE = 'paysaga';

/** A database of its own for paysaga's store on the server (the way compose gives it one). */
const storeEnv = (url: string) => ({ PAYSAGA_DATABASE_URL: url, PAYSAGA_DATABASE_SCHEMA: 'paysaga' });

const log = (message: string) => process.stderr.write(`[cluster] ${message}\n`);

/** Without the variables that would point paysaga or the CLI elsewhere than the test says. */
function cleanEnv(keepTemporal: boolean): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith('PAYSAGA_') || (!keepTemporal && k.startsWith('TEMPORAL_'))) continue;
    env[k] = v;
  }
  return env;
}

async function timed<T>(timings: Record<string, number>, name: string, fn: () => Promise<T>): Promise<T> {
  const started = Date.now();
  try {
    return await fn();
  } finally {
    timings[name] = Date.now() - started;
    log(`${name}: ${timings[name]} ms`);
  }
}

/** The cluster, started here or given by PAYSAGA_CLUSTER_ADDRESS, with paysaga registered on it. */
export async function startCluster(teardown: Teardown): Promise<Cluster> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paysaga-cluster-'));
  teardown.add('temp folder', () => fs.rmSync(dir, { recursive: true, force: true }));
  teardown.guardFolder(dir);
  const timings: Record<string, number> = {};
  const external = process.env.PAYSAGA_CLUSTER_ADDRESS;

  if (external) {
    let storeUrl = process.env.PAYSAGA_CLUSTER_DATABASE_URL;
    if (!storeUrl) {
      const postgres = await timed(timings, 'postgres', () => startPostgres(path.join(dir, 'pg')));
      teardown.guard(postgres.pid, dir, 'SIGQUIT', () => postgres.killNow());
      teardown.add('PostgreSQL', () => postgres.stop());
      storeUrl = await createDatabase(postgres, STORE_DATABASE);
    }
    const target: ClusterTarget = {
      address: external,
      namespace: process.env.PAYSAGA_CLUSTER_NAMESPACE || CLUSTER_NAMESPACE,
      env: { ...cleanEnv(true), TEMPORAL_ADDRESS: external, ...storeEnv(storeUrl) },
    };
    target.env.TEMPORAL_NAMESPACE = target.namespace;
    log(`against the cluster at ${target.address}, namespace ${target.namespace}`);
    await timed(timings, 'health', () => waitForHealthy(target, 30_000));
    const registration = await timed(timings, 'register', () => registerPaysaga(target));
    await timed(timings, 'search attributes usable', () => waitForSearchAttributes(target, 60_000));
    return { target, dir, timings, registration, storeUrl };
  }

  const bins = temporalServerBinaries();
  const [serverVersion, sqlToolVersion] = await Promise.all([
    binaryVersion(bins.server),
    binaryVersion(bins.sqlTool),
  ]);
  const postgres = await timed(timings, 'postgres', () => startPostgres(path.join(dir, 'pg')));
  // SIGQUIT: PostgreSQL's immediate shutdown (its command line names the data folder).
  teardown.guard(postgres.pid, dir, 'SIGQUIT', () => postgres.killNow());
  teardown.add('PostgreSQL', () => postgres.stop());
  log(`${postgres.version} on ${postgres.host}:${postgres.port}`);

  await timed(timings, 'schemas', () => setupSchemas(bins.sqlTool, postgres));
  const storeUrl = await timed(timings, 'store database', () => createDatabase(postgres, STORE_DATABASE));
  const server = await startTemporalServer(bins.server, postgres, dir, cleanEnv(false));
  teardown.guard(server.pid, 'temporal-server', 'SIGKILL', () => server.killNow());
  teardown.add('Temporal server', () => server.stop());

  // An empty client config file: a developer's own Temporal profile must not apply here.
  const clientConfig = path.join(dir, 'temporal-client.toml');
  fs.writeFileSync(clientConfig, '');
  const target: ClusterTarget = {
    address: server.address,
    namespace: CLUSTER_NAMESPACE,
    env: {
      ...cleanEnv(false),
      TEMPORAL_ADDRESS: server.address,
      TEMPORAL_NAMESPACE: CLUSTER_NAMESPACE,
      TEMPORAL_CONFIG_FILE: clientConfig,
      ...storeEnv(storeUrl),
    },
  };
  await timed(timings, 'server healthy', () =>
    waitForHealthy(
      target,
      120_000,
      () => server.child.exitCode === null && server.child.signalCode === null,
      () => server.logTail(),
    ),
  );
  log(`temporal-server (${serverVersion}) at ${server.address}, log ${server.log}`);
  const registration = await timed(timings, 'register', () => registerPaysaga(target));
  await timed(timings, 'search attributes usable', () => waitForSearchAttributes(target, 60_000));
  return {
    target,
    dir,
    timings,
    registration,
    storeUrl,
    local: { postgres, server, serverVersion, sqlToolVersion },
  };
}

export interface Paysaga {
  sandbox: PaysagaProcess;
  sandboxUrl: string;
  workers: PaysagaProcess[];
  apis: PaysagaProcess[];
  /** Where each API serves /v1: its internal listener. */
  apiUrls: string[];
  /** Each API's public listener: webhooks, payers' returns. */
  publicUrls: string[];
  apiToken: string;
  taskQueue: string;
  projectId: string;
  /** The workers' deployment and build (their bundle's hash): every workflow is pinned to it. */
  version: WorkerVersion;
}

/** Sandbox, two workers and two APIs against the cluster, all on one task queue. */
export async function startPaysaga(cluster: Cluster, teardown: Teardown): Promise<Paysaga> {
  const { dir, timings, target } = cluster;
  const keys = generateTestKeys();
  teardown.add('keys', () => fs.rmSync(keys.dir, { recursive: true, force: true }));
  teardown.guardFolder(keys.dir);

  // One build of dist/ and of the workflow bundle before several processes start (each would otherwise
  // check, and maybe build, the same files at once).
  await timed(timings, 'dist build', () =>
    mustRun(process.execPath, [PAYSAGA_BIN, '--version'], { timeoutMs: 300_000 }),
  );
  const bundlePath = path.join(dir, 'workflow-bundle.js');
  await timed(timings, 'workflow bundle', async () => {
    const { code } = await bundleWorkflowCode({
      ...workflowBundleOptions(),
      logger: new DefaultLogger('WARN'),
    });
    fs.writeFileSync(bundlePath, code);
  });
  // Versioned workers, as deployed: a deployment of this run's own (another cluster may hold others).
  const version = {
    deploymentName: `paysaga-cluster-${randomBytes(4).toString('hex')}`,
    buildId: buildIdOf(fs.readFileSync(bundlePath)),
  };

  const taskQueue = `paysaga-cluster-${randomBytes(4).toString('hex')}`;
  const apiToken = randomBytes(24).toString('base64url');
  const codecKeys = `k1:${randomBytes(32).toString('base64')}`;
  const returnSecret = randomBytes(32).toString('base64url');
  // Four distinct free ports: the internal and the public listener of each API.
  const ports = new Set<number>();
  while (ports.size < 4) ports.add(await freePort(HOST));
  const [internal1, public1, internal2, public2] = [...ports] as [number, number, number, number];
  const listeners = [
    { internal: internal1, public: public1 },
    { internal: internal2, public: public2 },
  ];
  const apiUrls = listeners.map((l) => `http://${HOST}:${l.internal}`);
  const publicUrls = listeners.map((l) => `http://${HOST}:${l.public}`);

  const start = (name: string, args: string[], env: NodeJS.ProcessEnv) => {
    const p = spawnPaysaga(name, args, { ...target.env, PAYSAGA_REBUILD: '0', ...env });
    teardown.guard(p.pid, 'paysaga.js', 'SIGKILL', () => {
      if (p.running()) p.child.kill('SIGKILL');
    });
    teardown.add(name, () => p.stop());
    return p;
  };

  // The provider: webhooks to the first API (one project has one webhook address); holds on, so a card
  // payment holds and then finalizes, as in `paysaga dev`.
  const sandboxConfig = path.join(dir, 'sandbox.json');
  fs.writeFileSync(
    sandboxConfig,
    JSON.stringify({
      serviceKey: keys.paths.servicePrivate,
      projects: [
        {
          id: PROJECT_ID,
          publicKey: keys.paths.partnerPublic,
          webhookUrl: `${publicUrls[0]}/webhooks/provider`,
          webhooks: true,
          hold: true,
        },
      ],
    }),
  );
  const sandbox = start('sandbox', ['sandbox', '--config', sandboxConfig, '--port', '0', '--host', HOST], {});
  const sandboxUrl = (await sandbox.waitFor(/sandbox listening on (\S+)/, 60_000))[1]!;

  const common = {
    PAYSAGA_TASK_QUEUE: taskQueue,
    PAYSAGA_PROVIDER_URL: sandboxUrl,
    PAYSAGA_PROJECT_ID: PROJECT_ID,
    PAYSAGA_PARTNER_PRIVATE_KEY: keys.paths.partnerPrivate,
    // The API verifies each webhook and the worker verifies it again
    // (docs/decisions/016-results-are-proven.md), as a deployment runs them.
    PAYSAGA_PROVIDER_TEST_SERVICE_KEYS: keys.paths.servicePublic,
    PAYSAGA_CODEC_KEYS: codecKeys,
  };
  // Debug: the SDK's per-session lines carry sessionId, which shows what each worker worked on.
  const workers = ['worker-1', 'worker-2'].map((name) =>
    start(name, ['worker'], {
      ...common,
      PAYSAGA_WORKFLOW_BUNDLE: bundlePath,
      PAYSAGA_DEPLOYMENT: version.deploymentName,
      PAYSAGA_LOG_LEVEL: 'debug',
    }),
  );
  // Both APIs sign payers' links with one secret, as replicas behind one address do; each one's links
  // point at the other's public listener, so a payer's return is verified by the API that did not
  // start the session (a load balancer may send it anywhere).
  const apis = listeners.map((l, i) =>
    start(`api-${i + 1}`, ['api'], {
      ...common,
      PAYSAGA_PUBLIC_HOST: HOST,
      PAYSAGA_PUBLIC_PORT: String(l.public),
      // Every webhook comes from one loopback address here; the limiter has its own test (test/api).
      PAYSAGA_PUBLIC_RATE_LIMIT: '0',
      PAYSAGA_INTERNAL_HOST: HOST,
      PAYSAGA_INTERNAL_PORT: String(l.internal),
      PAYSAGA_PUBLIC_URL: publicUrls[1 - i],
      PAYSAGA_RETURN_SECRETS: returnSecret,
      PAYSAGA_API_TOKENS: apiToken,
      PAYSAGA_LOG_LEVEL: 'warn',
    }),
  );
  await timed(timings, 'workers and APIs up', () =>
    Promise.all([
      ...workers.map((w) => w.waitFor(/worker polling/, 120_000)),
      ...apis.map((a) => a.waitFor(/paysaga API partner routes on (\S+)/, 120_000)),
    ]),
  );
  return {
    sandbox,
    sandboxUrl,
    workers,
    apis,
    apiUrls,
    publicUrls,
    apiToken,
    taskQueue,
    projectId: PROJECT_ID,
    version,
  };
}

/**
 * What every process printed, into test-results/cluster/ (replaced on each run; git ignores it), so a
 * failed CI run can be read afterwards. Card-like digits are blanked.
 */
export function saveLogs(cluster: Cluster | undefined, stack: Paysaga | undefined): string {
  const out = path.resolve(__dirname, '../../test-results/cluster');
  fs.rmSync(out, { recursive: true, force: true });
  fs.mkdirSync(out, { recursive: true });
  for (const p of [...(stack ? [stack.sandbox, ...stack.workers, ...stack.apis] : [])])
    fs.writeFileSync(path.join(out, `${p.name}.log`), withoutCardNumbers(p.output()));
  for (const file of [cluster?.local?.server.log, cluster?.local?.postgres.log]) {
    if (file && fs.existsSync(file)) fs.copyFileSync(file, path.join(out, path.basename(file)));
  }
  return out;
}
