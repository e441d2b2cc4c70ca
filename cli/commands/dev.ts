/**
 * `paysaga dev` (the README's `npm start`): everything on one machine until Ctrl-C:
 *
 *   1. the Temporal dev server (`temporal server start-dev`, SQLite in the data folder, UI on its port)
 *   2. the sandbox provider, in-process, with keys generated once into `<data>/keys` and its state in
 *      `<data>/sandbox.sqlite`
 *   3. the paysaga worker, in-process
 *   4. the HTTP API, in-process, with a bearer token generated once into `<data>/api-token`, on two
 *      listeners: public (webhooks, payer returns) and internal (/v1, docs, metrics, codec)
 *   0. before the worker and the API: the store, PostgreSQL embedded (PGlite in `<data>/pg`, served on a
 *      loopback port, store/embedded.ts) unless PAYSAGA_DATABASE_URL names a PostgreSQL server
 *
 * Ctrl-C (SIGINT) or SIGTERM stops them in the opposite order: API, worker, sandbox, Temporal. A second
 * signal while stopping kills what is left at once. See cli/README.md for flags and variables.
 */
import * as path from 'node:path';
import type { Command } from 'commander';
import type { Logger as PinoLogger } from 'pino';
import type { RunningApi, startApiFromEnv as StartApiFromEnv } from '../../api/server';
import type { RunningSandbox, startSandbox as StartSandbox } from '../../sandbox';
import type { SandboxConfigInput } from '../../sandbox/config';
import type * as ListenConfig from '../../api/listen-config';
import type * as Listeners from '../../api/listeners';
import type * as WorkerLogging from '../../workers/logging';
import type * as WorkerMain from '../../workers/main';
import type * as DevBuilds from '../dev/builds';
import type * as TemporalConnection from '../../platform/temporal-connection';
import type * as TemporalConfig from '../../platform/temporal-config';
import type * as TemporalClient from '@temporalio/client';
import type * as AskAgain from '../../client/ask-again';
import {
  prepareDataDir,
  removeDevState,
  resolveDataDir,
  runningDev,
  writeDevState,
  WITHDRAWN_KEYS_FILE,
  type DevData,
} from '../dev/data-dir';
import { parsePort, settlePorts, type PortSpec } from '../dev/ports';
import { startTemporalDevServer, type TemporalDevServer } from '../dev/temporal-server';
import { describeTemporalCli, resolveTemporalCli } from '../temporal-cli';
import { envForLocalTemporal } from '../../platform/temporal-config';
import type { EmbeddedStore, startEmbeddedStore as StartEmbeddedStore } from '../../store/embedded';

export const DEV_DEFAULTS = {
  host: '127.0.0.1',
  publicPort: 8080,
  internalPort: 8081,
  sandboxPort: 8090,
  temporalPort: 7233,
  temporalUiPort: 8233,
  namespace: 'default',
  projectId: 'dev-shop',
} as const;

export interface DevOptions {
  data?: string;
  host?: string;
  publicPort?: string;
  internalPort?: string;
  sandboxPort?: string;
  temporalPort?: string;
  temporalUiPort?: string;
  logLevel?: string;
  temporalLogLevel?: string;
}

/** The process seams, replaceable so a test can run the command in-process and "send" it a signal. */
export interface DevCommandDeps {
  signals: Pick<NodeJS.EventEmitter, 'on' | 'removeListener'>;
  out: (line: string) => void;
  err: (line: string) => void;
  env: NodeJS.ProcessEnv;
  /** Called on a second signal while stopping, after the Temporal server was killed. */
  exit: (code: number) => void;
}

const processDeps: DevCommandDeps = {
  signals: process,
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  env: process.env,
  exit: (code) => process.exit(code),
};

export function register(program: Command, deps: DevCommandDeps = processDeps): void {
  program
    .command('dev')
    .description(
      'run everything on one machine: Temporal dev server (UI), sandbox provider, worker and API; ' +
        'Ctrl-C stops it all',
    )
    .option(
      '--data <dir>',
      'data folder: Temporal SQLite, keys, API token (default PAYSAGA_DATA_DIR or .data)',
    )
    .option(
      '--host <host>',
      `address every server listens on (default PAYSAGA_DEV_HOST or ${DEV_DEFAULTS.host})`,
    )
    .option(
      '--public-port <n>',
      `the API's public port: webhooks, payer returns (default PAYSAGA_PUBLIC_PORT or ${DEV_DEFAULTS.publicPort}; 0: a free one)`,
    )
    .option(
      '--internal-port <n>',
      `the API's internal port: /v1, docs, metrics, codec (default PAYSAGA_INTERNAL_PORT or ${DEV_DEFAULTS.internalPort}; 0: a free one)`,
    )
    .option(
      '--sandbox-port <n>',
      `sandbox port (default PAYSAGA_SANDBOX_PORT or ${DEV_DEFAULTS.sandboxPort}; 0: a free one)`,
    )
    .option(
      '--temporal-port <n>',
      `Temporal gRPC port (default PAYSAGA_TEMPORAL_PORT or ${DEV_DEFAULTS.temporalPort}; 0: a free one)`,
    )
    .option(
      '--temporal-ui-port <n>',
      `Temporal UI port (default PAYSAGA_TEMPORAL_UI_PORT or ${DEV_DEFAULTS.temporalUiPort}; 0: a free one)`,
    )
    .option(
      '--log-level <level>',
      'log level of API, worker and sandbox on stderr (default PAYSAGA_LOG_LEVEL or warn)',
    )
    .option(
      '--temporal-log-level <level>',
      'log level of the Temporal server (debug, info, warn, error)',
      'warn',
    )
    .action(async (opts: DevOptions) => {
      await runDev(opts, deps);
      // The process should now end by itself; should a stray handle keep it alive, do not hang on shutdown.
      if (deps === processDeps) setTimeout(() => process.exit(), 3_000).unref();
    });
}

function parseStepMs(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 60_000)
    throw new Error(
      `PAYSAGA_DEV_SANDBOX_STEP_MS must be a whole number of milliseconds 0..60000, got ${value}`,
    );
  return n;
}

function portOption(flag: string | undefined, envValue: string | undefined, fallback: number, what: string) {
  if (flag !== undefined) return parsePort(flag, what);
  if (envValue !== undefined && envValue !== '') return parsePort(envValue, what);
  return fallback;
}

/** Signals this close to the first one are the same Ctrl-C delivered twice. */
const DUPLICATE_SIGNAL_MS = 1_500;
/** Where `paysaga dev` lets events go besides public https hosts: this machine (platform/outbound-guard.ts). */
const DEV_EVENT_ALLOW_HOSTS = 'localhost,127.0.0.0/8,::1';

interface Step {
  name: string;
  stop: () => Promise<void>;
}

/** Starts the stack, waits for SIGINT/SIGTERM, stops it; resolves once everything has stopped. */
export async function runDev(opts: DevOptions, deps: DevCommandDeps = processDeps): Promise<void> {
  const env = deps.env;
  // Loaded lazily so `paysaga --help` and the other commands start fast.
  /* eslint-disable @typescript-eslint/no-require-imports */
  const workerMain = require('../../workers/main') as typeof WorkerMain;
  const { createLogger, parseLogLevel } = require('../../workers/logging') as typeof WorkerLogging;
  const { startApiFromEnv } = require('../../api/server') as { startApiFromEnv: typeof StartApiFromEnv };
  const { assertNoRemovedVariables } = require('../../api/listen-config') as typeof ListenConfig;
  const { assertCodecProtected } = require('../../api/listeners') as typeof Listeners;
  const { startSandbox } = require('../../sandbox') as { startSandbox: typeof StartSandbox };
  const { startEmbeddedStore } = require('../../store/embedded') as {
    startEmbeddedStore: typeof StartEmbeddedStore;
  };
  /* eslint-enable @typescript-eslint/no-require-imports */

  // --- configuration: every mistake is reported before anything starts ---
  const dataDir = resolveDataDir(opts.data, env);
  const host = opts.host || env.PAYSAGA_DEV_HOST || DEV_DEFAULTS.host;
  // The sandbox's pace: the pause between its flow steps (its own default, 1000 ms, when unset).
  const sandboxStepMs = env.PAYSAGA_DEV_SANDBOX_STEP_MS?.trim()
    ? parseStepMs(env.PAYSAGA_DEV_SANDBOX_STEP_MS)
    : undefined;
  // The embedded server creates this namespace; TEMPORAL_ADDRESS, TLS, API keys and profiles are for
  // clusters and are not used here (the server is plaintext on this machine).
  const namespace = env.TEMPORAL_NAMESPACE || DEV_DEFAULTS.namespace;
  const logLevel = parseLogLevel(opts.logLevel ?? env.PAYSAGA_LOG_LEVEL, 'warn');
  assertNoRemovedVariables(env);
  // The dev stack always encrypts; an open codec must not be reachable from other machines.
  const codecTokens = (env.PAYSAGA_CODEC_TOKENS ?? '').split(',').filter((t) => t.trim());
  assertCodecProtected({ codec: true, tokens: codecTokens, host });
  const wanted: PortSpec[] = [
    {
      name: 'API public',
      port: portOption(opts.publicPort, env.PAYSAGA_PUBLIC_PORT, DEV_DEFAULTS.publicPort, '--public-port'),
      how: '--public-port or PAYSAGA_PUBLIC_PORT',
    },
    {
      name: 'API internal',
      port: portOption(
        opts.internalPort,
        env.PAYSAGA_INTERNAL_PORT,
        DEV_DEFAULTS.internalPort,
        '--internal-port',
      ),
      how: '--internal-port or PAYSAGA_INTERNAL_PORT',
    },
    {
      name: 'sandbox',
      port: portOption(
        opts.sandboxPort,
        env.PAYSAGA_SANDBOX_PORT,
        DEV_DEFAULTS.sandboxPort,
        '--sandbox-port',
      ),
      how: '--sandbox-port or PAYSAGA_SANDBOX_PORT',
    },
    {
      name: 'Temporal',
      port: portOption(
        opts.temporalPort,
        env.PAYSAGA_TEMPORAL_PORT,
        DEV_DEFAULTS.temporalPort,
        '--temporal-port',
      ),
      how: '--temporal-port or PAYSAGA_TEMPORAL_PORT',
    },
    {
      name: 'Temporal UI',
      port: portOption(
        opts.temporalUiPort,
        env.PAYSAGA_TEMPORAL_UI_PORT,
        DEV_DEFAULTS.temporalUiPort,
        '--temporal-ui-port',
      ),
      how: '--temporal-ui-port or PAYSAGA_TEMPORAL_UI_PORT',
    },
    // The embedded store's port is chosen with the others: one picked later by the OS could be one of
    // these, chosen free but not listened on yet.
    { name: 'embedded store', port: 0, how: 'PAYSAGA_DATABASE_URL (a PostgreSQL server instead)' },
  ];
  const other = runningDev(dataDir);
  if (other)
    throw new Error(
      `paysaga dev already runs on ${dataDir} (pid ${other.pid}, API ${other.apiUrl}); ` +
        'stop it first, or use another --data folder',
    );
  const cli = resolveTemporalCli({ env });
  if (!cli.path)
    throw new Error(
      'no Temporal CLI found (TEMPORAL_CLI_PATH, `temporal` on PATH, or .tools/ from `npm run setup`); ' +
        'run `npm run setup` first',
    );
  const [publicPort, internalPort, sandboxPort, temporalPort, uiPort, storePort] = (
    await settlePorts(host, wanted)
  ).map((p) => p.port) as [number, number, number, number, number, number];

  // --- signals: the first one stops everything (also during start), a second one kills ---
  const abort = new AbortController();
  let wake: (signal: string) => void = () => undefined;
  const stopRequested = new Promise<string>((resolve) => (wake = resolve));
  const started: Step[] = [];
  let temporal: TemporalDevServer | undefined;
  let stopping = false;
  let firstSignalAt = 0;
  const onSignal = (name: string) => () => {
    if (!stopping && !abort.signal.aborted) {
      firstSignalAt = Date.now();
      deps.err(`dev: ${name}, stopping (again to kill at once)`);
      abort.abort();
      wake(name);
      return;
    }
    // Under `npm start` one Ctrl-C arrives twice (from the terminal and forwarded by npm): only a
    // signal that comes later is a second request.
    if (Date.now() - firstSignalAt < DUPLICATE_SIGNAL_MS) return;
    deps.err('dev: killed');
    if (temporal?.child.pid) killGroup(temporal.child.pid);
    deps.exit(1);
  };
  const onInt = onSignal('SIGINT');
  const onTerm = onSignal('SIGTERM');
  deps.signals.on('SIGINT', onInt);
  deps.signals.on('SIGTERM', onTerm);

  const stopAll = async () => {
    stopping = true;
    let failed = false;
    for (const step of [...started].reverse()) {
      try {
        await step.stop();
        deps.err(`dev: ${step.name} stopped`);
      } catch (err) {
        failed = true;
        deps.err(`dev: stopping ${step.name} failed: ${(err as Error).message}`);
      }
    }
    started.length = 0;
    removeDevState(dataDir);
    return failed;
  };
  const checkAborted = () => {
    if (abort.signal.aborted) throw new Error('interrupted while starting');
  };

  try {
    let data: DevData;
    let sandbox: RunningSandbox;
    let api: RunningApi;
    let logger: PinoLogger;
    let store: EmbeddedStore | undefined;
    let builds: string[] = [];
    try {
      data = await prepareDataDir(dataDir);
      logger = createLogger({ service: 'paysaga-dev', level: logLevel, fd: 2 });

      const publicUrl = `http://${host}:${publicPort}`;
      const internalUrl = `http://${host}:${internalPort}`;
      deps.out(`starting the Temporal dev server (${describeTemporalCli(cli)}) ...`);
      temporal = await startTemporalDevServer({
        codecEndpoint: `${internalUrl}/codec`,
        cliPath: cli.path,
        dbFile: data.dbFile,
        host,
        port: temporalPort,
        uiPort,
        namespace,
        logLevel: opts.temporalLogLevel ?? 'warn',
        onLine: (line) => deps.err(`[temporal] ${line}`),
        signal: abort.signal,
      });
      const server = temporal;
      started.push({ name: 'Temporal dev server', stop: () => server.stop() });
      checkAborted();

      const sandboxConfig: SandboxConfigInput = {
        serviceKey: data.keys.servicePrivate,
        projects: [
          {
            id: DEV_DEFAULTS.projectId,
            publicKey: data.keys.partnerPublic,
            webhookUrl: `${publicUrl}/webhooks/provider`,
            webhooks: true,
            // Card payments stop at finalization_pending, so a session can hold and finalize in part;
            // the default finalization policy (auto) charges the whole hold right away.
            hold: true,
          },
        ],
        ...(sandboxStepMs !== undefined ? { stepMs: sandboxStepMs } : {}),
      };
      deps.out(`Temporal dev server up at ${temporal.address}; starting the sandbox, worker and API ...`);
      // Its state lives in the data folder next to Temporal's: sessions in flight go on after a restart.
      sandbox = await startSandbox(sandboxConfig, {
        port: sandboxPort,
        host,
        logger: logger.child({ component: 'sandbox' }),
        dataDir: data.dir,
      });
      const sb = sandbox;
      started.push({ name: 'sandbox', stop: () => sb.close() });
      checkAborted();

      // The store of record: a PostgreSQL server when PAYSAGA_DATABASE_URL names one, else PGlite in the
      // data folder, served on a loopback port (the worker and API connect to it like to any server).
      let databaseUrl = env.PAYSAGA_DATABASE_URL?.trim();
      if (!databaseUrl) {
        deps.out(`starting the embedded store in ${data.pgDir} ...`);
        store = await startEmbeddedStore({ dataDir: data.pgDir, port: storePort });
        const embedded = store;
        started.push({ name: 'store', stop: () => embedded.stop() });
        databaseUrl = store.url;
        checkAborted();
      }

      const stackEnv: NodeJS.ProcessEnv = {
        ...envForLocalTemporal(env, temporal.address, namespace),
        PAYSAGA_PROVIDER_ENV: 'test',
        PAYSAGA_PROVIDER_URL: sandbox.url,
        PAYSAGA_PROJECT_ID: DEV_DEFAULTS.projectId,
        PAYSAGA_PARTNER_PRIVATE_KEY: data.keys.partnerPrivate,
        PAYSAGA_PROVIDER_TEST_SERVICE_KEYS: data.keys.servicePublic,
        // `paysaga keys withdraw --data <dir>` writes it; the worker and the API re-read it as it changes.
        PAYSAGA_WITHDRAWN_KEYS: env.PAYSAGA_WITHDRAWN_KEYS || path.join(data.dir, WITHDRAWN_KEYS_FILE),
        PAYSAGA_API_TOKENS: data.token,
        PAYSAGA_DATABASE_URL: databaseUrl,
        PAYSAGA_TEMPORAL_UI_URL: temporal.uiUrl,
        PAYSAGA_LOG_LEVEL: logLevel,
        // Each session's back_url is the API's signed return page; PAYSAGA_PUBLIC_URL, when unset, is
        // the public listener's address (payer and provider run on this machine).
        PAYSAGA_RETURN_SECRETS: env.PAYSAGA_RETURN_SECRETS || data.returnSecret,
        // Payloads encrypted at rest; the UI reads them through the API's /codec (internal listener,
        // open without PAYSAGA_CODEC_TOKENS only while it is on loopback).
        PAYSAGA_CODEC_KEYS: env.PAYSAGA_CODEC_KEYS || data.codecKeys,
        // A backend under development receives its events on this machine, over plain http.
        PAYSAGA_EVENT_ALLOW_HTTP: env.PAYSAGA_EVENT_ALLOW_HTTP || 'true',
        PAYSAGA_EVENT_ALLOW_HOSTS: env.PAYSAGA_EVENT_ALLOW_HOSTS || DEV_EVENT_ALLOW_HOSTS,
        PAYSAGA_CODEC_CORS_ORIGINS:
          env.PAYSAGA_CODEC_CORS_ORIGINS || `${temporal.uiUrl},http://localhost:${uiPort}`,
        // The reconciler re-reads closed money sessions each minute: news whose webhooks were lost (a
        // chargeback filed in the sandbox, say) reaches its session within a minute.
        PAYSAGA_RECONCILE_EVERY_MS: env.PAYSAGA_RECONCILE_EVERY_MS || '60000',
      };
      // shutdownSignals []: the worker must not stop by itself on Ctrl-C, the API goes first. Its build
      // becomes current: one build at a time takes new work here (cli/dev/builds.ts).
      const worker = await workerMain.startWorkerFromEnv({
        env: { ...stackEnv, PAYSAGA_PROMOTE: 'always' },
        logger: logger.child({ component: 'worker' }),
        shutdownSignals: [],
      });
      started.push({ name: 'worker', stop: () => worker.shutdown() });
      checkAborted();
      if ((await worker.promoted) === 'failed')
        throw new Error('the worker could not make its build current');
      builds = await drainOlderBuilds(stackEnv, data.dir, worker, logger, started);
      checkAborted();

      api = await startApiFromEnv(stackEnv, {
        public: { port: publicPort, host },
        internal: { port: internalPort, host },
        derivePublicUrl: true,
      });
      const a = api;
      started.push({ name: 'API', stop: () => a.close() });
      checkAborted();
    } catch (err) {
      await stopAll();
      throw err;
    }

    writeDevState(dataDir, {
      pid: process.pid,
      apiUrl: api.url,
      publicUrl: api.publicUrl,
      internalUrl: api.internalUrl,
      sandboxUrl: sandbox.url,
      temporalAddress: temporal.address,
      temporalUiUrl: temporal.uiUrl,
      namespace,
      temporalPid: temporal.pid,
      ...(store ? { databaseUrl: store.url } : {}),
      startedAt: new Date().toISOString(),
    });
    printBanner(deps, {
      data,
      api,
      builds,
      sandboxUrl: sandbox.url,
      temporal,
      namespace,
      database: store ? `${store.url}  (embedded, ${data.pgDir})` : 'PAYSAGA_DATABASE_URL',
      dataFlag: opts.data,
    });

    // Should the Temporal server die by itself, the stack is useless: stop the rest and say so.
    const serverDied = temporal.exited.then((code) => `the Temporal dev server exited (${code})`);
    const reason = await Promise.race([stopRequested, serverDied]);
    if (!abort.signal.aborted) deps.err(`dev: ${reason}; stopping`);
    const failed = await stopAll();
    deps.out('paysaga dev stopped');
    if (!abort.signal.aborted || failed) process.exitCode = 1;
  } finally {
    deps.signals.removeListener('SIGINT', onInt);
    deps.signals.removeListener('SIGTERM', onTerm);
  }
}

/**
 * Keeps the started build's bundle, and runs a worker of each older build that still has open workflows
 * (they are pinned to it) until they end. Returns the banner's lines about builds.
 */
async function drainOlderBuilds(
  stackEnv: NodeJS.ProcessEnv,
  dataDir: string,
  worker: WorkerMain.RunningWorker,
  logger: PinoLogger,
  started: Step[],
): Promise<string[]> {
  /* eslint-disable @typescript-eslint/no-require-imports */
  const workerMain = require('../../workers/main') as typeof WorkerMain;
  const builds = require('../dev/builds') as typeof DevBuilds;
  const { connectTemporalClient } =
    require('../../platform/temporal-connection') as typeof TemporalConnection;
  const { temporalSettingsFromEnv } = require('../../platform/temporal-config') as typeof TemporalConfig;
  const { Client } = require('@temporalio/client') as typeof TemporalClient;
  const { clientInterceptors } = require('../../client/ask-again') as typeof AskAgain;
  /* eslint-enable @typescript-eslint/no-require-imports */
  const { version } = worker;
  builds.keepBundle(dataDir, version, worker.workflowCode.bundlePath);
  const settings = temporalSettingsFromEnv(stackEnv);
  const connection = await connectTemporalClient(settings);
  const client = new Client({
    connection,
    namespace: settings.namespace,
    interceptors: clientInterceptors(),
  });
  const lines = [`  Build        ${version.buildId}  (current; deployment ${version.deploymentName})`];
  let older: DevBuilds.OlderBuild[];
  try {
    older = await builds.olderBuildsWithWork(client, dataDir, version);
  } catch (err) {
    await connection.close();
    throw err;
  }
  for (const b of older) {
    lines.push(...builds.describeOlderBuild(b, version.deploymentName));
    if (!b.bundlePath) continue;
    const { PAYSAGA_RECONCILE_EVERY_MS: _reconciler, ...env } = stackEnv;
    const drain = await workerMain.startWorkerFromEnv({
      env: {
        ...env,
        PAYSAGA_WORKFLOW_BUNDLE: b.bundlePath,
        PAYSAGA_BUILD_ID: b.buildId,
        PAYSAGA_PROMOTE: 'never',
      },
      logger: logger.child({ component: 'worker', buildId: b.buildId }),
      shutdownSignals: [],
    });
    // Stopped once nothing of its build is open any more (or with the stack).
    const watch = setInterval(() => {
      builds
        .olderBuildsWithWork(client, dataDir, version)
        .then((left) => {
          if (left.some((l) => l.buildId === b.buildId)) return;
          clearInterval(watch);
          logger.info(
            { buildId: b.buildId },
            'every workflow of the older build has ended: its worker stops',
          );
          return drain.shutdown();
        })
        .catch(() => undefined);
    }, 15_000);
    started.push({
      name: `worker of build ${b.buildId}`,
      stop: async () => {
        clearInterval(watch);
        await drain.shutdown();
      },
    });
  }
  // The connection serves the watches of the older builds' workers; with none, it is not needed.
  if (older.some((b) => b.bundlePath)) started.push({ name: 'build watch', stop: () => connection.close() });
  else await connection.close();
  return lines;
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

function printBanner(
  deps: DevCommandDeps,
  o: {
    data: DevData;
    api: RunningApi;
    sandboxUrl: string;
    temporal: TemporalDevServer;
    namespace: string;
    database: string;
    dataFlag?: string;
    builds: string[];
  },
): void {
  const rel = path.relative(process.cwd(), o.data.dir) || '.';
  const shown = rel.startsWith('..') ? o.data.dir : rel;
  const dataArg = o.dataFlag ? ` --data ${shown}` : '';
  const lines = [
    '',
    'paysaga dev is up',
    `  API          ${o.api.url}  (/v1, bearer token below)`,
    `  API docs     ${o.api.internalUrl}/docs`,
    `  Internal     ${o.api.internalUrl}  (/healthz, /metrics, /docs, /openapi.json, /codec)`,
    `  Public       ${o.api.publicUrl}  (/webhooks/provider, /return/{sessionId})`,
    `  API token    ${o.data.token}   (${o.data.tokenFile}${o.data.created.token ? ', new' : ''})`,
    `  Temporal UI  ${o.temporal.uiUrl}`,
    `  Temporal     ${o.temporal.address}  namespace ${o.namespace}  pid ${o.temporal.pid}`,
    `  Sandbox      ${o.sandboxUrl}  (project ${DEV_DEFAULTS.projectId})`,
    `  Store        ${o.database}`,
    `  Data         ${o.data.dir}`,
    ...o.builds,
    '',
    `Try every session kind end to end: paysaga demo${dataArg}   (or: npm run paysaga -- demo${dataArg})`,
    'Ctrl-C stops everything.',
  ];
  for (const line of lines) deps.out(line);
}
