/**
 * The worker process: every session workflow and its activities, configured by environment variables
 * (Temporal: TEMPORAL_* of the standard client configuration, see common/temporal-config.ts, and
 * PAYSAGA_TASK_QUEUE; provider: PAYSAGA_PROVIDER_URL,
 * PAYSAGA_PROJECT_ID, PAYSAGA_PARTNER_PRIVATE_KEY, ...; logs: PAYSAGA_LOG_LEVEL; Prometheus metrics of the
 * SDK: PAYSAGA_WORKER_METRICS=host:port; the task queue's reconciler for webhooks-off deployments:
 * PAYSAGA_RECONCILE_EVERY_MS, see client/reconciler.ts; outbound events: PAYSAGA_EVENT_*, see
 * workers/event-config.ts, delivered by a second worker on `<task queue>-events`). Run alone by
 * `paysaga worker`, in-process by `paysaga dev`.
 *
 * Workflow code: `PAYSAGA_WORKFLOW_BUNDLE` (a file written by bundleWorkflowCode), else the prebuilt
 * `dist/workflow-bundle.js` (`npm run build`) when it is newer than the compiled workflows, else the
 * workflows are bundled at start (a few seconds) and, when running from dist/, the bundle is saved there
 * for the next start.
 *
 * Logs are pino JSON lines carrying `sessionId` (= workflow id) for everything a session does. Card
 * data never reaches a worker (DESIGN decision 2); the log formatter also blanks any card-looking field.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client } from '@temporalio/client';
import type { LogLevel, LogMetadata, Logger, PayloadCodec } from '@temporalio/common';
import { bundleWorkflowCode, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import pino, { type Logger as PinoLogger } from 'pino';
import { ensureReconciler, reconcilerInputFromEnv, reconcilerWorkflowId } from '../client/reconciler';
import type { ReconcilerInput } from '../common/reconciler';
import { ReturnUrls, returnSecretsFromEnv } from '../client/return-url';
import { providerClientFromConfig, providerConfigFromEnv, resolveEnvironment } from '../provider';
import { codecFromEnv } from '../common/codec';
import {
  describeTemporalSettings,
  temporalSettingsFromEnv,
  type TemporalSettings,
} from '../common/temporal-config';
import { connectTemporalClient, temporalConnectionOptions } from '../common/temporal-connection';
import { assertSearchAttributesRegistered } from '../common/search-attribute-check';
import { EventsClient } from '../client/events-client';
import type { ConfiguredEndpoint } from '../activities/event-activities';
import { eventSettingsFromEnv } from './event-config';
import { DEFAULT_MAX_CACHED_WORKFLOWS, workerTuningFromEnv } from './tuning';
import { createEventDeliveryWorker, createPaysagaWorker } from './worker';

export const PINO_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type PinoLevel = (typeof PINO_LEVELS)[number];

/** Field names whose values are blanked in every log line, at any depth. */
const SECRET_FIELD =
  /^(card_number|card_code|cvv|cvc|card_details|card|pan|privateKey|partnerPrivateKey|authorization)$/i;
const MAX_SCRUB_DEPTH = 6;

function scrub(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object' || depth > MAX_SCRUB_DEPTH) return value;
  if (Array.isArray(value)) return value.map((v) => scrub(v, depth + 1));
  // Only plain data: requests, errors and other class instances are left to pino's serializers.
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value))
    out[k] = SECRET_FIELD.test(k) ? '[redacted]' : scrub(v, depth + 1);
  return out;
}

export interface CreateLoggerOptions {
  level?: PinoLevel;
  /** `service` field of every line (children add `component`). */
  service: string;
  /** 1: stdout (default), 2: stderr. */
  fd?: 1 | 2;
}

/** A pino logger with paysaga's conventions: JSON lines, `service`, card-looking fields blanked. */
export function createLogger(o: CreateLoggerOptions): PinoLogger {
  return pino(
    {
      level: o.level ?? 'info',
      base: { service: o.service },
      formatters: { log: (obj) => scrub(obj) as Record<string, unknown> },
    },
    pino.destination({ fd: o.fd ?? 1, sync: true }),
  );
}

export function parseLogLevel(value: string | undefined, fallback: PinoLevel): PinoLevel {
  if (value === undefined || value === '') return fallback;
  const v = value.toLowerCase();
  if (!(PINO_LEVELS as readonly string[]).includes(v))
    throw new Error(`log level must be one of ${PINO_LEVELS.join(', ')}, got ${value}`);
  return v as PinoLevel;
}

const TO_PINO: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

/** Temporal metadata as log fields: the workflow id is the session id; task tokens are noise. */
function sessionFields(meta: LogMetadata | undefined): Record<string, unknown> {
  if (!meta) return {};
  const fields: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(meta)) if (k !== 'taskToken') fields[k] = v;
  if (typeof meta.workflowId === 'string') fields.sessionId = meta.workflowId;
  return fields;
}

/** The Temporal SDK's Logger interface over pino (SDK, workflow and activity logs). */
export function temporalLogger(logger: PinoLogger): Logger {
  const log = (level: LogLevel, message: string, meta?: LogMetadata) =>
    logger[TO_PINO[level] ?? 'info'](sessionFields(meta), message);
  return {
    log,
    trace: (m, meta) => log('TRACE', m, meta),
    debug: (m, meta) => log('DEBUG', m, meta),
    info: (m, meta) => log('INFO', m, meta),
    warn: (m, meta) => log('WARN', m, meta),
    error: (m, meta) => log('ERROR', m, meta),
  };
}

/**
 * Installs the Temporal Runtime once per process with `logger` (native core logs forwarded to it).
 * `shutdownSignals`: the SDK's default (SIGINT, SIGTERM, SIGQUIT, SIGUSR2) shuts every worker down by
 * itself; `[]` leaves stopping to the caller (`paysaga dev` stops the API first). Returns false when a
 * Runtime already existed (its settings stay).
 */
export function installRuntime(
  logger: PinoLogger,
  shutdownSignals?: NodeJS.Signals[],
  /** host:port for a Prometheus `/metrics` endpoint of the SDK's worker metrics (PAYSAGA_WORKER_METRICS). */
  metricsAddress?: string,
): boolean {
  try {
    Runtime.install({
      logger: temporalLogger(logger),
      telemetryOptions: {
        logging: { filter: { core: 'WARN', other: 'ERROR' }, forward: {} },
        ...(metricsAddress ? { metrics: { prometheus: { bindAddress: metricsAddress } } } : {}),
      },
      ...(shutdownSignals ? { shutdownSignals } : {}),
    });
    return true;
  } catch {
    return false;
  }
}

/** Files the prebuilt bundle is made from (compiled workflows and the common/ files they import). */
function bundleInputs(distDir: string): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const full = path.join(dir, e.name);
      if (e.isDirectory()) walk(full);
      else if (e.name.endsWith('.js')) files.push(full);
    }
  };
  walk(path.join(distDir, 'workflows'));
  for (const shared of ['search-attributes.js', 'events.js', 'event-delivery.js'])
    files.push(path.join(distDir, 'common', shared));
  return files;
}

/** True when `bundle` exists and no input it was built from is newer. */
export function bundleIsFresh(bundle: string, distDir: string): boolean {
  let built: number;
  try {
    built = fs.statSync(bundle).mtimeMs;
  } catch {
    return false;
  }
  for (const input of bundleInputs(distDir)) {
    try {
      if (fs.statSync(input).mtimeMs > built) return false;
    } catch {
      // an input that no longer exists: the bundle may hold stale code
      return false;
    }
  }
  return true;
}

/** Where the prebuilt bundle lives when this module runs compiled (dist/workers/main.js). */
export function prebuiltBundlePath(): string | undefined {
  return __filename.endsWith('.js') ? path.resolve(__dirname, '..', 'workflow-bundle.js') : undefined;
}

export interface WorkflowCode {
  /** A bundle file for the worker; undefined: the worker bundles from source itself. */
  bundlePath?: string;
  source: 'env' | 'prebuilt' | 'bundled' | 'source';
}

/** Decides which workflow code the worker loads (see the file comment). */
export async function resolveWorkflowCode(env: NodeJS.ProcessEnv, logger: PinoLogger): Promise<WorkflowCode> {
  const fromEnv = env.PAYSAGA_WORKFLOW_BUNDLE;
  if (fromEnv) {
    if (!fs.existsSync(fromEnv))
      throw new Error(`PAYSAGA_WORKFLOW_BUNDLE is set to ${fromEnv}, but no file is there`);
    return { bundlePath: path.resolve(fromEnv), source: 'env' };
  }
  const prebuilt = prebuiltBundlePath();
  if (!prebuilt) return { source: 'source' };
  const distDir = path.dirname(prebuilt);
  if (bundleIsFresh(prebuilt, distDir)) return { bundlePath: prebuilt, source: 'prebuilt' };

  const started = Date.now();
  logger.info('bundling workflows (no fresh dist/workflow-bundle.js; `npm run build` makes one)');
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('../workflows'),
    logger: temporalLogger(logger.child({ component: 'bundler' }, { level: 'warn' })),
  });
  // Written next to the inputs for the next start; a temp name first so a reader never sees half a file.
  const tmp = `${prebuilt}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, code);
  fs.renameSync(tmp, prebuilt);
  logger.info({ ms: Date.now() - started, bundle: prebuilt }, 'workflows bundled');
  return { bundlePath: prebuilt, source: 'bundled' };
}

export interface StartWorkerOptions {
  env?: NodeJS.ProcessEnv;
  logger?: PinoLogger;
  /** Passed to {@link installRuntime}; omitted: the SDK's default signals. */
  shutdownSignals?: NodeJS.Signals[];
}

export interface RunningWorker {
  worker: Worker;
  /** The event deliveries' own worker (`<task queue>-events`). */
  deliveryWorker: Worker;
  address: string;
  namespace: string;
  taskQueue: string;
  workflowCode: WorkflowCode;
  /** Settles when the worker has stopped (by {@link RunningWorker.shutdown} or a shutdown signal). */
  done: Promise<void>;
  /** Stops polling, lets in-flight activities finish (grace time 10 s), closes the connections. */
  shutdown(): Promise<void>;
}

/** Starts (or finds) the task queue's reconciler through a short-lived client connection. */
async function startReconcilerFor(
  temporal: TemporalSettings,
  input: ReconcilerInput,
  codec: PayloadCodec | undefined,
): Promise<void> {
  const connection = await connectTemporalClient(temporal);
  try {
    const client = new Client({
      connection,
      namespace: temporal.namespace,
      ...(codec ? { dataConverter: { payloadCodecs: [codec] } } : {}),
    });
    await ensureReconciler(client, temporal.taskQueue, input);
  } finally {
    await connection.close();
  }
}

/** Replaces the registry's configured endpoints with PAYSAGA_EVENT_ENDPOINTS (a worker must be polling). */
async function syncConfiguredEndpointsFor(
  temporal: TemporalSettings,
  configured: ConfiguredEndpoint[],
  codec: PayloadCodec | undefined,
): Promise<void> {
  const connection = await connectTemporalClient(temporal);
  try {
    const client = new Client({
      connection,
      namespace: temporal.namespace,
      ...(codec ? { dataConverter: { payloadCodecs: [codec] } } : {}),
    });
    await new EventsClient({ temporal: client, taskQueue: temporal.taskQueue }).syncConfiguredEndpoints(
      configured.map(({ secrets: _secrets, ...endpoint }) => endpoint),
    );
  } finally {
    await connection.close();
  }
}

/** Refuses a namespace without paysaga's search attributes (`paysaga setup` adds them). */
async function checkNamespace(temporal: TemporalSettings): Promise<void> {
  const connection = await connectTemporalClient(temporal);
  try {
    await assertSearchAttributesRegistered(connection, temporal.namespace);
  } finally {
    await connection.close();
  }
}

/** Builds and starts the worker from the environment; configuration errors are thrown before connecting. */
export async function startWorkerFromEnv(o: StartWorkerOptions = {}): Promise<RunningWorker> {
  const env = o.env ?? process.env;
  const logger =
    o.logger ?? createLogger({ service: 'worker', level: parseLogLevel(env.PAYSAGA_LOG_LEVEL, 'info') });
  const temporal = temporalSettingsFromEnv(env);
  const providerConfig = providerConfigFromEnv(env);
  const environment = resolveEnvironment(providerConfig);
  // PAYSAGA_CODEC_KEYS: payloads encrypted at rest (the API must have the same keys).
  const codec = codecFromEnv(env);
  // PAYSAGA_RECONCILE_EVERY_MS: this worker also makes sure the task queue's reconciler runs.
  const reconcile = reconcilerInputFromEnv(env);
  // PAYSAGA_EVENT_*: delivery policy and configured endpoints of outbound events.
  const events = eventSettingsFromEnv(env, temporal.taskQueue);
  // PAYSAGA_MAX_CACHED_WORKFLOWS: the workflow cache (workers/tuning.ts).
  const tuning = workerTuningFromEnv(env);
  installRuntime(logger, o.shutdownSignals, env.PAYSAGA_WORKER_METRICS || undefined);

  await checkNamespace(temporal);
  const workflowCode = await resolveWorkflowCode(env, logger);
  // Temporal's retry policy owns retries of provider calls (visible in history): none inside an activity.
  const provider = providerClientFromConfig(providerConfig, { maxRetries: 0 });
  // PAYSAGA_PUBLIC_URL and PAYSAGA_RETURN_SECRETS: the signed back_url of the sessions this worker opens
  // (the API signs the same way: both must have the same values).
  const returnSecrets = returnSecretsFromEnv(env);
  const returnUrls =
    env.PAYSAGA_PUBLIC_URL && returnSecrets.length > 0
      ? new ReturnUrls(env.PAYSAGA_PUBLIC_URL, returnSecrets)
      : undefined;
  const returnUrl = returnUrls ? (sessionId: string) => returnUrls.forSession(sessionId) : undefined;
  let connection: NativeConnection | undefined;
  let worker: Worker;
  let deliveryWorker: Worker;
  try {
    try {
      connection = await NativeConnection.connect(temporalConnectionOptions(temporal));
    } catch (err) {
      throw new Error(
        `cannot connect to Temporal at ${describeTemporalSettings(temporal)}: ${(err as Error).message}`,
        { cause: err },
      );
    }
    const dataConverter = codec ? { dataConverter: { payloadCodecs: [codec] } } : {};
    worker = await createPaysagaWorker({
      connection,
      namespace: temporal.namespace,
      taskQueue: temporal.taskQueue,
      provider,
      ...(returnUrl ? { returnUrl } : {}),
      events,
      tuning,
      ...(workflowCode.bundlePath ? { workflowBundlePath: workflowCode.bundlePath } : {}),
      ...dataConverter,
    });
    deliveryWorker = await createEventDeliveryWorker({
      connection,
      namespace: temporal.namespace,
      taskQueue: temporal.taskQueue,
      events,
      ...dataConverter,
    });
  } catch (err) {
    await connection?.close().catch(() => undefined);
    await provider.close();
    throw err;
  }
  const conn = connection;
  if (reconcile) {
    try {
      await startReconcilerFor(temporal, reconcile, codec);
    } catch (err) {
      await conn.close().catch(() => undefined);
      await provider.close();
      throw err;
    }
  }
  const stop = (w: Worker) => {
    if (w.getState() === 'RUNNING') w.shutdown();
  };
  const done = (async () => {
    try {
      // Either worker stopping (a signal, a fatal error) stops the other.
      const ran = await Promise.allSettled([
        worker.run().finally(() => stop(deliveryWorker)),
        deliveryWorker.run().finally(() => stop(worker)),
      ]);
      const failed = ran.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    } finally {
      await conn.close().catch(() => undefined);
      await provider.close().catch(() => undefined);
      logger.info('worker stopped');
    }
  })();
  if (events.configured) {
    // After polling began: the registry's Update needs a worker to run it.
    try {
      await syncConfiguredEndpointsFor(temporal, events.configured, codec);
    } catch (err) {
      stop(worker);
      stop(deliveryWorker);
      await done.catch(() => undefined);
      throw new Error(`PAYSAGA_EVENT_ENDPOINTS could not be registered: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }
  logger.info(
    {
      address: temporal.address,
      namespace: temporal.namespace,
      temporal: describeTemporalSettings(temporal),
      taskQueue: temporal.taskQueue,
      provider: environment.baseUrl,
      projectId: providerConfig.projectId,
      workflowCode: workflowCode.source,
      maxCachedWorkflows: tuning.maxCachedWorkflows ?? DEFAULT_MAX_CACHED_WORKFLOWS,
      metrics: env.PAYSAGA_WORKER_METRICS ? `http://${env.PAYSAGA_WORKER_METRICS}/metrics` : 'off',
      payloads: codec ? 'encrypted' : 'plain',
      reconciler: reconcile ? { workflowId: reconcilerWorkflowId(temporal.taskQueue), ...reconcile } : 'off',
      events: {
        deliveryTaskQueue: events.policy.deliveryTaskQueue,
        retryForMs: events.policy.retryForMs,
        configuredEndpoints: events.configured ? events.configured.map((e) => e.id) : 'unchanged',
      },
    },
    'worker polling',
  );
  if (!codec) logger.warn('PAYSAGA_CODEC_KEYS is not set: payloads are stored in Temporal unencrypted');
  return {
    worker,
    deliveryWorker,
    address: temporal.address,
    namespace: temporal.namespace,
    taskQueue: temporal.taskQueue,
    workflowCode,
    done,
    async shutdown() {
      stop(worker);
      stop(deliveryWorker);
      await done;
    },
  };
}
