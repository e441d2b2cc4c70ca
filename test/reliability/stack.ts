/**
 * Everything the reliability suite runs, each part a real process it can kill and start again:
 *
 *  - a Temporal dev server of its own (the CLI of cli/temporal-cli.ts, `start-dev --db-filename` in the
 *    run's folder), so it can be stopped and started again on its database on the same port;
 *  - paysaga's store: a PostgreSQL server of its own (test/cluster/postgres.ts) with a `paysaga` database,
 *    which the suite stops for minutes (an outage) and crashes, on the same port;
 *  - `paysaga sandbox` (the provider), in memory, never restarted: it is the truth the verdict reads;
 *  - `paysaga worker` processes (SIGKILLed and started again) and `paysaga api` processes (restarted), on
 *    one task queue, configured by environment variables only, as a deployment runs them. Each API keeps
 *    its two ports across restarts: the sandbox's webhooks go to the first one's public listener, payers
 *    return to either.
 *
 * Everything is stopped by the Teardown (test/cluster/teardown.ts), also when jest itself dies (its
 * reaper). What each process printed is saved to test-results/reliability/ at the end.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { workflowBundleOptions } from '../../workers/workflow-bundle-options';
import { freePort } from '../../cli/dev/ports';
import { startTemporalDevServer, type TemporalDevServer } from '../../cli/dev/temporal-server';
import { resolveTemporalCli } from '../../cli/temporal-cli';
import { DEFAULT_TEMPORAL_NAMESPACE } from '../../common/search-attributes';
import { generateTestKeys, type TestKeys } from '../helpers/keys';
import { spawnPaysaga, PAYSAGA_BIN, type PaysagaProcess } from '../cluster/paysaga-process';
import { createDatabase, startPostgres, type Postgres } from '../cluster/postgres';
import { mustRun } from '../cluster/run';
import type { Teardown } from '../cluster/teardown';

const HOST = '127.0.0.1';
/** The longest store outage of a profile, plus a start. */
const READY_WITHIN_MS = 6 * 60_000;
export const PROJECT_ID = 'reliability-shop';

export interface StackOptions {
  workers: number;
  apis: number;
  /** Per provider call of workers and APIs: past it the outcome is unknown. */
  providerTimeoutMs: number;
  /** The sandbox's config beyond keys and the project. */
  sandbox: { stepMs: number; qrTtlSeconds: number; threeDsTtlSeconds: number };
  /** The worker's reconciler (webhooks-off deployments): every this many ms; 0 = off. */
  reconcileEveryMs: number;
  /** Where the run's files go. */
  dir: string;
  /** Where each process's output is written as it comes (emptied first): kept when the run is cut short. */
  logsDir: string;
}

/** A paysaga process the suite may kill and start again (a new child each time, same name and ports). */
export interface Restartable {
  name: string;
  current(): PaysagaProcess;
  /** Every process that ran under this name, oldest first (their output for the logs). */
  history(): PaysagaProcess[];
  /** SIGKILL (no goodbye) or SIGTERM (graceful), then a new process; resolves once it is ready. */
  restart(signal: 'SIGKILL' | 'SIGTERM'): Promise<void>;
}

export interface Stack {
  dir: string;
  keys: TestKeys;
  namespace: string;
  taskQueue: string;
  temporalAddress: string;
  temporalUiUrl: string;
  sandboxUrl: string;
  sandbox: PaysagaProcess;
  /** paysaga's store: `down` and `up` make its outages (the same port and data). */
  store: Pick<Postgres, 'down' | 'up'>;
  storeUrl: string;
  workers: Restartable[];
  apis: Restartable[];
  /** Each API's internal listener (/v1). */
  apiUrls: string[];
  apiToken: string;
  /** The payload codec keys of workers and APIs (PAYSAGA_CODEC_KEYS): a client reading Temporal needs them. */
  codecKeys: string;
  /** The workflow bundle every worker runs (its histories replay against it). */
  bundlePath: string;
  /** The Temporal dev server: stopped (SIGTERM, SIGKILL after a grace) and started again on its database. */
  restartTemporal(): Promise<{ downMs: number }>;
  temporalLog(): string[];
  /** The Temporal server's and PostgreSQL's logs, beside the processes' own in logsDir. */
  saveLogs(): void;
  /** A paysaga process that exited without the suite stopping it: a crash, always a defect. */
  unexpectedExits(): string[];
}

const log = (message: string) => process.stderr.write(`[reliability] ${message}\n`);

/** Without the variables that would point paysaga or the CLI elsewhere than the suite says. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith('PAYSAGA_') || k.startsWith('TEMPORAL_')) continue;
    env[k] = v;
  }
  return env;
}

export async function startStack(o: StackOptions, teardown: Teardown): Promise<Stack> {
  fs.mkdirSync(o.dir, { recursive: true });
  fs.rmSync(o.logsDir, { recursive: true, force: true });
  fs.mkdirSync(o.logsDir, { recursive: true });
  const logFile = (name: string) => path.join(o.logsDir, `${name}.log`);
  const keys = generateTestKeys();
  teardown.add('keys', () => fs.rmSync(keys.dir, { recursive: true, force: true }));
  teardown.guardFolder(keys.dir);

  // --- Temporal: its own dev server on a database file, on one port for its whole life ---
  const cli = resolveTemporalCli();
  if (!cli.path) throw new Error('no Temporal CLI: run `npm run setup` (installs it into .tools/)');
  const namespace = DEFAULT_TEMPORAL_NAMESPACE;
  let temporalPort = await freePort(HOST);
  let uiPort = await freePort(HOST);
  const dbFile = path.join(o.dir, 'temporal.sqlite');
  const temporalLines: string[] = [];
  const startTemporal = () =>
    startTemporalDevServer({
      cliPath: cli.path!,
      dbFile,
      host: HOST,
      port: temporalPort,
      uiPort,
      namespace,
      logLevel: 'warn',
      readyTimeoutMs: 120_000,
      onLine: (line) => {
        temporalLines.push(line);
        if (temporalLines.length > 2_000) temporalLines.shift();
      },
    });
  // A free port can be taken by another process before the server binds it (a shared machine): then new
  // ports, a few times. Later starts keep the frontend's port (workers and APIs know it): only the UI's
  // may change. Any failed start is tried again so (the server's words are not read); the fourth throws.
  const startTemporalRetrying = async (keepFrontend: boolean): Promise<TemporalDevServer> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await startTemporal();
      } catch (err) {
        if (attempt === 4) throw err;
        log(`Temporal dev server did not start (${String(err).split('\n').at(-1)}); again on new ports`);
        if (!keepFrontend) temporalPort = await freePort(HOST);
        uiPort = await freePort(HOST);
        await new Promise((r) => setTimeout(r, 2_000 * attempt));
      }
    }
  };
  let temporal: TemporalDevServer = await startTemporalRetrying(false);
  const guardTemporal = (pid: number) =>
    teardown.guard(pid, 'start-dev', 'SIGKILL', () => {
      try {
        process.kill(-pid, 'SIGKILL'); // its process group
      } catch {
        // already gone
      }
    });
  guardTemporal(temporal.pid);
  teardown.add('Temporal dev server', () => temporal.stop(5_000));
  const temporalAddress = `${HOST}:${temporalPort}`;
  log(`Temporal dev server ${temporalAddress} on ${dbFile} (pid ${temporal.pid})`);

  // --- paysaga's store: PostgreSQL, a database of its own; each process migrates it as it starts ---
  const pgDir = path.join(o.dir, 'pg');
  const postgres = await startPostgres(pgDir);
  const guardPostgres = () => teardown.guard(postgres.pid, pgDir, 'SIGQUIT', () => postgres.killNow());
  guardPostgres();
  teardown.add('PostgreSQL', () => postgres.stop());
  const store: Stack['store'] = {
    down: (mode) => postgres.down(mode),
    async up() {
      await postgres.up();
      guardPostgres(); // a new postmaster
    },
  };
  const storeUrl = await createDatabase(postgres, 'paysaga');
  log(`PostgreSQL (${postgres.version}) on ${postgres.host}:${postgres.port}, log ${postgres.log}`);

  // --- one build of dist/ and the workflow bundle before several processes start ---
  await mustRun(process.execPath, [PAYSAGA_BIN, '--version'], { timeoutMs: 300_000 });
  const bundlePath = path.join(o.dir, 'workflow-bundle.js');
  const { code } = await bundleWorkflowCode({
    ...workflowBundleOptions(),
    logger: new DefaultLogger('WARN'),
  });
  fs.writeFileSync(bundlePath, code);

  const base = {
    ...cleanEnv(),
    PAYSAGA_REBUILD: '0',
    // An empty client config file: a developer's own Temporal profile must not apply here.
    TEMPORAL_CONFIG_FILE: path.join(o.dir, 'temporal-client.toml'),
    TEMPORAL_ADDRESS: temporalAddress,
    TEMPORAL_NAMESPACE: namespace,
  };
  fs.writeFileSync(base.TEMPORAL_CONFIG_FILE, '');
  const guard = (p: PaysagaProcess) =>
    teardown.guard(p.pid, 'paysaga.js', 'SIGKILL', () => {
      if (p.running()) p.child.kill('SIGKILL');
    });

  // --- the sandbox: webhooks to the first API's public listener (fixed ports, known before it starts) ---
  const listeners: { internal: number; public: number }[] = [];
  const taken = new Set<number>([temporalPort, uiPort]);
  const port = async () => {
    for (;;) {
      const p = await freePort(HOST);
      if (!taken.has(p)) {
        taken.add(p);
        return p;
      }
    }
  };
  for (let i = 0; i < o.apis; i++) listeners.push({ internal: await port(), public: await port() });
  const publicUrls = listeners.map((l) => `http://${HOST}:${l.public}`);
  const apiUrls = listeners.map((l) => `http://${HOST}:${l.internal}`);
  const sandboxConfig = path.join(o.dir, 'sandbox.json');
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
      stepMs: o.sandbox.stepMs,
      qrTtlSeconds: o.sandbox.qrTtlSeconds,
      threeDsTtlSeconds: o.sandbox.threeDsTtlSeconds,
    }),
  );
  const sandbox = spawnPaysaga(
    'sandbox',
    ['sandbox', '--config', sandboxConfig, '--port', '0', '--host', HOST],
    base,
    logFile('sandbox'),
  );
  guard(sandbox);
  teardown.add('sandbox', () => sandbox.stop());
  const sandboxUrl = (await sandbox.waitFor(/sandbox listening on (\S+)/, 60_000))[1]!;

  const taskQueue = `reliability-${randomBytes(4).toString('hex')}`;
  const apiToken = randomBytes(24).toString('base64url');
  const common = {
    ...base,
    PAYSAGA_TASK_QUEUE: taskQueue,
    PAYSAGA_PROVIDER_URL: sandboxUrl,
    PAYSAGA_PROJECT_ID: PROJECT_ID,
    PAYSAGA_PARTNER_PRIVATE_KEY: keys.paths.partnerPrivate,
    // The API verifies each webhook and the worker verifies it again
    // (docs/decisions/016-results-are-proven.md), as a deployment runs them.
    PAYSAGA_PROVIDER_TEST_SERVICE_KEYS: keys.paths.servicePublic,
    PAYSAGA_CODEC_KEYS: `k1:${randomBytes(32).toString('base64')}`,
    PAYSAGA_PROVIDER_TIMEOUT_MS: String(o.providerTimeoutMs),
    PAYSAGA_DATABASE_URL: storeUrl,
  };
  const returnSecret = randomBytes(32).toString('base64url');
  const crashes: string[] = [];
  const codecKeys = common.PAYSAGA_CODEC_KEYS;

  const restartable = (
    name: string,
    args: string[],
    env: NodeJS.ProcessEnv,
    ready: RegExp,
  ): Restartable & { started: Promise<void> } => {
    const all: PaysagaProcess[] = [];
    const stopping = new Set<PaysagaProcess>();
    const spawnOne = async () => {
      const p = spawnPaysaga(name, args, env, logFile(`${name}.${all.length + 1}`));
      all.push(p);
      guard(p);
      void p.exited.then(({ code, signal }) => {
        if (stopping.has(p)) return;
        const what = `${name}.${all.indexOf(p) + 1} exited on its own (${code ?? signal})`;
        crashes.push(what);
        log(`${what}; its last lines:\n${p.tail(40)}`);
      });
      // A process waits for the store as it starts: one started during the store's outage is ready after it.
      await p.waitFor(ready, READY_WITHIN_MS);
    };
    teardown.add(name, () => {
      const p = all.at(-1);
      if (p) stopping.add(p);
      return p?.stop(10_000);
    });
    return {
      name,
      started: spawnOne(),
      current: () => all.at(-1)!,
      history: () => [...all],
      async restart(signal) {
        const p = all.at(-1)!;
        stopping.add(p);
        if (signal === 'SIGKILL') p.child.kill('SIGKILL');
        else await p.stop(15_000);
        await p.exited;
        await spawnOne();
      },
    };
  };

  const workers = Array.from({ length: o.workers }, (_, i) =>
    restartable(
      `worker-${i + 1}`,
      ['worker'],
      {
        ...common,
        PAYSAGA_WORKFLOW_BUNDLE: bundlePath,
        PAYSAGA_LOG_LEVEL: 'info',
        ...(o.reconcileEveryMs > 0
          ? { PAYSAGA_RECONCILE_EVERY_MS: String(o.reconcileEveryMs), PAYSAGA_RECONCILE_WINDOW_MS: '3600000' }
          : {}),
      },
      /worker polling/,
    ),
  );
  const apis = listeners.map((l, i) =>
    restartable(
      `api-${i + 1}`,
      ['api'],
      {
        ...common,
        PAYSAGA_PUBLIC_HOST: HOST,
        PAYSAGA_PUBLIC_PORT: String(l.public),
        // Every webhook comes from one loopback address here; the limiter has its own test (test/api).
        PAYSAGA_PUBLIC_RATE_LIMIT: '0',
        PAYSAGA_INTERNAL_HOST: HOST,
        PAYSAGA_INTERNAL_PORT: String(l.internal),
        PAYSAGA_PUBLIC_URL: publicUrls[i],
        PAYSAGA_RETURN_SECRETS: returnSecret,
        PAYSAGA_API_TOKENS: apiToken,
        PAYSAGA_LOG_LEVEL: 'warn',
      },
      /paysaga API partner routes on (\S+)/,
    ),
  );
  await Promise.all([...workers, ...apis].map((r) => r.started));

  return {
    dir: o.dir,
    keys,
    namespace,
    taskQueue,
    temporalAddress,
    temporalUiUrl: temporal.uiUrl,
    sandboxUrl,
    sandbox,
    store,
    storeUrl,
    workers,
    apis,
    apiUrls,
    apiToken,
    codecKeys,
    bundlePath,
    async restartTemporal() {
      const started = Date.now();
      await temporal.stop(10_000);
      temporal = await startTemporalRetrying(true);
      guardTemporal(temporal.pid);
      return { downMs: Date.now() - started };
    },
    temporalLog: () => [...temporalLines],
    unexpectedExits: () => [...crashes],
    saveLogs() {
      fs.writeFileSync(logFile('temporal'), temporalLines.join('\n'));
      try {
        fs.copyFileSync(postgres.log, logFile('postgres'));
      } catch {
        // nothing written yet
      }
    },
  };
}

/** The run's folder: under the OS temp dir, removed by the teardown. */
export function runFolder(teardown: Teardown): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paysaga-reliability-'));
  teardown.add('run folder', () => fs.rmSync(dir, { recursive: true, force: true }));
  teardown.guardFolder(dir);
  return dir;
}
