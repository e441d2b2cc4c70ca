/**
 * The worker process: every session workflow and its activities, configured by environment variables
 * (Temporal: TEMPORAL_* of the standard client configuration, see platform/temporal-config.ts, and
 * PAYSAGA_TASK_QUEUE; provider: PAYSAGA_PROVIDER_URL,
 * PAYSAGA_PROJECT_ID, PAYSAGA_PARTNER_PRIVATE_KEY, ...; logs: PAYSAGA_LOG_LEVEL; Prometheus metrics of the
 * SDK: PAYSAGA_WORKER_METRICS=host:port; the task queue's reconciler for webhooks-off deployments:
 * PAYSAGA_RECONCILE_EVERY_MS, see client/reconciler.ts; the store: PAYSAGA_DATABASE_URL, see
 * store/config.ts; outbound events: PAYSAGA_EVENT_*, see workers/event-config.ts, delivered from the
 * store by this process's workers/event-dispatcher.ts). Run alone by `paysaga worker`, in-process by
 * `paysaga dev`.
 *
 * Workflow code: workers/workflow-code.ts. Logs: workers/logging.ts.
 */
import * as fs from 'node:fs';
import { Client } from '@temporalio/client';
import type { PayloadCodec } from '@temporalio/common';
import { NativeConnection, type Worker } from '@temporalio/worker';
import type { Logger as PinoLogger } from 'pino';
import { ensureReconciler, reconcilerInputFromEnv, reconcilerWorkflowId } from '../client/reconciler';
import type { ReconcilerInput } from '../common/reconciler';
import { ReturnUrls, returnSecretsFromEnv } from '../client/return-url';
import {
  providerClientFromConfig,
  providerConfigFromEnv,
  resolveEnvironment,
  webhookVerifierFromConfig,
  type ProviderConfig,
} from '../provider';
import { assertCodecConfigured, codecFromEnv } from '../platform/codec';
import {
  describeTemporalSettings,
  temporalSettingsFromEnv,
  type TemporalSettings,
} from '../platform/temporal-config';
import { connectTemporalClient, temporalConnectionOptions } from '../platform/temporal-connection';
import { assertSearchAttributesRegistered } from '../platform/search-attribute-check';
import { EventsClient } from '../client/events-client';
import { eventSettingsFromEnv } from './event-config';
import { hostsOf, OutboundGuard, outboundPolicyFromEnv } from '../platform/outbound-guard';
import { EventDispatcher } from './event-dispatcher';
import { signingKeysFromEnv } from '../platform/event-secrets';
import { storeFromEnv } from '../store/from-env';
import { describeStoreUrl } from '../store/config';
import type { Store } from '../store/database';
import { createLogger, installRuntime, parseLogLevel } from './logging';
import { DEFAULT_MAX_CACHED_WORKFLOWS, workerTuningFromEnv } from './tuning';
import { resolveWorkflowCode, type WorkflowCode } from './workflow-code';
import { createPaysagaWorker, type PaysagaWorkerOptions } from './worker';
import { keepWorker } from './kept-worker';
import {
  promote,
  promotionFromEnv,
  workerVersionFromEnv,
  type Promotion,
  type WorkerVersion,
} from './versioning';
import { clientInterceptors } from '../client/ask-again';

export interface StartWorkerOptions {
  env?: NodeJS.ProcessEnv;
  logger?: PinoLogger;
  /** Passed to {@link installRuntime}; omitted: the SDK's default signals. */
  shutdownSignals?: NodeJS.Signals[];
}

export interface RunningWorker {
  /** The Temporal worker at work: a new one if the SDK lost a workflow task (workers/kept-worker.ts). */
  readonly worker: Worker;
  /** Delivers events from the store's outbox. */
  dispatcher: EventDispatcher;
  address: string;
  namespace: string;
  taskQueue: string;
  workflowCode: WorkflowCode;
  /** The deployment and build this worker serves (its workflows are pinned to it). */
  version: WorkerVersion;
  /** Settles once the promotion policy is applied (PAYSAGA_PROMOTE): what it did. */
  promoted: Promise<string>;
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
      interceptors: clientInterceptors(),
      ...(codec ? { dataConverter: { payloadCodecs: [codec] } } : {}),
    });
    await ensureReconciler(client, temporal.taskQueue, input);
  } finally {
    await connection.close();
  }
}

/** Applies PAYSAGA_PROMOTE once the worker polls (Temporal knows a build only from its first poll). */
async function promoteBuild(
  temporal: TemporalSettings,
  version: WorkerVersion,
  how: Promotion,
  logger: PinoLogger,
): Promise<string> {
  if (how === 'never') return 'left as is';
  const connection = await connectTemporalClient(temporal);
  try {
    return await promote(
      new Client({ connection, namespace: temporal.namespace, interceptors: clientInterceptors() }),
      version,
      how,
      logger,
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

/**
 * The worker's check of webhooks. Without a service key it can verify nothing: every webhook then only
 * makes its session read transaction/state (slower, still the provider's truth), and the log says so.
 */
function webhookVerifier(config: ProviderConfig, logger: PinoLogger): PaysagaWorkerOptions['verifyWebhook'] {
  // PAYSAGA_WITHDRAWN_KEYS: keys withdrawn since start, re-read as it changes (provider/withdrawn-keys.ts).
  if (resolveEnvironment(config).serviceKeys.length > 0) return webhookVerifierFromConfig(config);
  logger.warn(
    'no provider service key configured: webhooks cannot be verified, sessions read the state instead',
  );
  return () => {
    throw new Error('no provider service public key configured');
  };
}

/** Builds and starts the worker from the environment; configuration errors are thrown before connecting. */
export async function startWorkerFromEnv(o: StartWorkerOptions = {}): Promise<RunningWorker> {
  const env = o.env ?? process.env;
  const logger =
    o.logger ?? createLogger({ service: 'worker', level: parseLogLevel(env.PAYSAGA_LOG_LEVEL, 'info') });
  const temporal = temporalSettingsFromEnv(env);
  const providerConfig = providerConfigFromEnv(env);
  const environment = resolveEnvironment(providerConfig);
  // The service keys are read and checked (type, size) here: a wrong one stops the worker before it
  // connects anywhere. The partner's key is, by the provider client below.
  const verifyWebhook = webhookVerifier(providerConfig, logger);
  // PAYSAGA_CODEC_KEYS: payloads encrypted at rest (the API must have the same keys).
  const codec = codecFromEnv(env);
  assertCodecConfigured(env, codec, 'paysaga worker');
  // PAYSAGA_RECONCILE_EVERY_MS: this worker also makes sure the task queue's reconciler runs.
  const reconcile = reconcilerInputFromEnv(env);
  // PAYSAGA_EVENT_*: delivery policy and configured endpoints of outbound events.
  const events = eventSettingsFromEnv(env);
  // PAYSAGA_EVENT_ALLOW_HTTP, PAYSAGA_EVENT_ALLOW_HOSTS: where deliveries may go (platform/outbound-guard.ts).
  const outbound = outboundPolicyFromEnv(env, hostsOf([temporal.address]));
  // PAYSAGA_EVENT_SIGNING_KEY (else PAYSAGA_CODEC_KEYS): the endpoints' secrets derive from it.
  const signingKeys = signingKeysFromEnv(env);
  // PAYSAGA_MAX_CACHED_WORKFLOWS: the workflow cache (workers/tuning.ts).
  const tuning = workerTuningFromEnv(env);
  // PAYSAGA_PROMOTE: whether this worker makes its build current (workers/versioning.ts).
  const promotion = promotionFromEnv(env);
  // Temporal's retry policy owns retries of provider calls (visible in history): none inside an activity.
  const provider = providerClientFromConfig(providerConfig, { maxRetries: 0 });
  installRuntime(logger, o.shutdownSignals, env.PAYSAGA_WORKER_METRICS || undefined);

  let store: Store;
  let workflowCode: WorkflowCode;
  let version: WorkerVersion;
  try {
    await checkNamespace(temporal);
    // PAYSAGA_DATABASE_URL: the store of record (migrated here if it is behind).
    store = await storeFromEnv(env, 'paysaga-worker', (m) => logger.warn(m));
  } catch (err) {
    await provider.close();
    throw err;
  }
  try {
    workflowCode = await resolveWorkflowCode(env, logger);
    // PAYSAGA_DEPLOYMENT, PAYSAGA_BUILD_ID: the worker's version, by default its bundle's hash.
    version = workerVersionFromEnv(env, fs.readFileSync(workflowCode.bundlePath));
  } catch (err) {
    await store.close();
    await provider.close();
    throw err;
  }
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
  let workerOptions: PaysagaWorkerOptions;
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
    workerOptions = {
      connection,
      namespace: temporal.namespace,
      taskQueue: temporal.taskQueue,
      provider,
      verifyWebhook,
      store,
      ...(returnUrl ? { returnUrl } : {}),
      events,
      tuning,
      workflowBundlePath: workflowCode.bundlePath,
      version,
      ...dataConverter,
    };
    worker = await createPaysagaWorker(workerOptions);
    if (events.configured)
      await new EventsClient({ store }).syncConfiguredEndpoints(
        events.configured.map(({ secrets: _secrets, ...endpoint }) => endpoint),
      );
  } catch (err) {
    await connection?.close().catch(() => undefined);
    await provider.close();
    await store.close().catch(() => undefined);
    throw err;
  }
  const conn = connection;
  if (reconcile) {
    try {
      await startReconcilerFor(temporal, reconcile, codec);
    } catch (err) {
      await conn.close().catch(() => undefined);
      await provider.close();
      await store.close().catch(() => undefined);
      throw err;
    }
  }
  const dispatcher = new EventDispatcher({
    store,
    policy: events.policy,
    guard: new OutboundGuard(outbound),
    configuredSecrets: new Map((events.configured ?? []).map((c) => [c.id, c.secrets])),
    ...(signingKeys ? { signingKeys } : {}),
    concurrency: events.deliveryConcurrency,
    pollMs: events.pollMs,
    logger,
  });
  dispatcher.start();
  const promoted = promoteBuild(temporal, version, promotion, logger).catch((err: unknown) => {
    logger.error(
      { err, deployment: version.deploymentName, buildId: version.buildId },
      'could not apply PAYSAGA_PROMOTE: make the build current by hand (docs/operations.md, Releasing)',
    );
    return 'failed';
  });
  const options = workerOptions;
  const kept = keepWorker(
    worker,
    () => createPaysagaWorker(options),
    (message) => logger.error({ taskQueue: temporal.taskQueue }, message),
  );
  const done = (async () => {
    try {
      await kept.done;
    } finally {
      await dispatcher.stop();
      await conn.close().catch(() => undefined);
      await provider.close().catch(() => undefined);
      await store.close().catch(() => undefined);
      logger.info('worker stopped');
    }
  })();
  logger.info(
    {
      address: temporal.address,
      namespace: temporal.namespace,
      temporal: describeTemporalSettings(temporal),
      taskQueue: temporal.taskQueue,
      provider: environment.baseUrl,
      store: `${describeStoreUrl(env.PAYSAGA_DATABASE_URL ?? '')} (schema ${store.schema})`,
      projectId: providerConfig.projectId,
      workflowCode: workflowCode.source,
      deployment: version.deploymentName,
      buildId: version.buildId,
      promote: promotion,
      maxCachedWorkflows: tuning.maxCachedWorkflows ?? DEFAULT_MAX_CACHED_WORKFLOWS,
      metrics: env.PAYSAGA_WORKER_METRICS ? `http://${env.PAYSAGA_WORKER_METRICS}/metrics` : 'off',
      payloads: codec ? 'encrypted' : 'plain',
      reconciler: reconcile ? { workflowId: reconcilerWorkflowId(temporal.taskQueue), ...reconcile } : 'off',
      events: {
        deliveryConcurrency: events.deliveryConcurrency,
        retryForMs: events.policy.retryForMs,
        signingKey: signingKeys
          ? signingKeys.current
          : 'none (endpoints registered by the API get no delivery)',
        configuredEndpoints: events.configured ? events.configured.map((e) => e.id) : 'unchanged',
      },
    },
    'worker polling',
  );
  if (!codec) logger.warn('PAYSAGA_CODEC_KEYS is not set: payloads are stored in Temporal unencrypted');
  return {
    get worker() {
      return kept.current;
    },
    dispatcher,
    address: temporal.address,
    namespace: temporal.namespace,
    taskQueue: temporal.taskQueue,
    workflowCode,
    version,
    promoted,
    done,
    async shutdown() {
      kept.shutdown();
      await done;
    },
  };
}
