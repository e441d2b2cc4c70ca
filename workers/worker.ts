import type { DataConverter } from '@temporalio/common';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { createChargeActivities } from './charge-activities';
import { createProofActivities } from '../activities/proof-activities';
import { createProviderActivities } from '../activities/provider-activities';
import { createReconcileActivities } from '../activities/reconcile-activities';
import { createStoreActivities } from '../activities/store-activities';
import type { Store } from '../store/database';
import type { ProviderClient, WebhookVerification } from '../provider';
import { isNewer } from '../common/snapshot';
import { createEventActivities } from '../activities/event-activities';
import { DEFAULT_EVENT_DELIVERY } from '../common/event-delivery';
import type { EventWorkerSettings } from './event-config';
import { DEFAULT_MAX_CACHED_WORKFLOWS } from './tuning';
import { deploymentOptions, type WorkerVersion } from './versioning';
import { workflowBundleOptions } from './workflow-bundle-options';
import { clientInterceptors } from '../client/ask-again';

export interface PaysagaWorkerOptions {
  connection: NativeConnection;
  namespace?: string;
  taskQueue: string;
  /**
   * The provider client of the activities. Retries belong to Temporal's policy (visible in history), so
   * give it `maxRetries: 0` (startWorkerFromEnv does).
   */
  provider: ProviderClient;
  /**
   * Verifies a webhook with the provider's service keys (createWebhookVerifier): sessions apply only
   * events this worker verified again (docs/decisions/016-results-are-proven.md).
   */
  verifyWebhook: (raw: Buffer, signature: string | undefined) => WebhookVerification;
  /** paysaga's store of record: workflows write their records to it through activities. */
  store: Store;
  /**
   * paysaga's signed back_url of a session (docs/decisions/014-two-listeners.md), when a public URL is
   * configured.
   */
  returnUrl?: (sessionId: string) => string | undefined;
  /** A prebuilt bundle (production) — else workflows are bundled from source at start. */
  workflowBundlePath?: string;
  /**
   * The worker's deployment and build (workers/versioning.ts): its workflows are pinned to it. Without
   * it the worker is unversioned (tests that run one build on a task queue of their own).
   */
  version?: WorkerVersion;
  /** With the payload codec (platform/codec.ts), so that what enters Temporal is encrypted. */
  dataConverter?: DataConverter;
  /**
   * Outbound events (workers/event-config.ts): delivery policy and PAYSAGA_EVENT_ENDPOINTS. Default:
   * DEFAULT_EVENT_DELIVERY, delivered by this worker itself (no delivery task queue of its own).
   */
  events?: Pick<EventWorkerSettings, 'policy' | 'configured'>;
  tuning?: Pick<
    WorkerOptions,
    'maxConcurrentActivityTaskExecutions' | 'maxConcurrentWorkflowTaskExecutions' | 'maxCachedWorkflows'
  >;
}

/** The one worker of paysaga: every session workflow and its activities on one task queue. */
export async function createPaysagaWorker(o: PaysagaWorkerOptions): Promise<Worker> {
  const bundling = workflowBundleOptions();
  return Worker.create({
    connection: o.connection,
    namespace: o.namespace ?? 'default',
    taskQueue: o.taskQueue,
    activities: {
      ...createProviderActivities(o.provider),
      ...createProofActivities(o.verifyWebhook),
      ...createStoreActivities({
        store: o.store,
        fanOut: { retryForMs: (o.events?.policy ?? DEFAULT_EVENT_DELIVERY).retryForMs },
      }),
      ...createChargeActivities({ provider: o.provider, store: o.store, taskQueue: o.taskQueue }),
      ...createReconcileActivities({ provider: o.provider, taskQueue: o.taskQueue, store: o.store, isNewer }),
      ...createEventActivities({
        store: o.store,
        fanOut: { retryForMs: (o.events?.policy ?? DEFAULT_EVENT_DELIVERY).retryForMs },
      }),
    },
    ...(o.dataConverter ? { dataConverter: o.dataConverter } : {}),
    ...(o.workflowBundlePath
      ? { workflowBundle: { codePath: o.workflowBundlePath }, interceptors: { client: clientInterceptors() } }
      : {
          workflowsPath: bundling.workflowsPath,
          // A bundle built here is built as a built bundle is: the same compile target, source map and
          // preloaded modules, and the workflow interceptors a built bundle already holds.
          bundlerOptions: {
            preloadModules: bundling.preloadModules,
            webpackConfigHook: bundling.webpackConfigHook,
          },
          interceptors: {
            client: clientInterceptors(),
            workflowModules: bundling.workflowInterceptorModules,
          },
        }),
    ...(o.version ? { workerDeploymentOptions: deploymentOptions(o.version) } : {}),
    // Workers stop on SIGINT/SIGTERM after in-flight activities finish (the SDK's default signals).
    shutdownGraceTime: '10s',
    maxCachedWorkflows: DEFAULT_MAX_CACHED_WORKFLOWS,
    ...o.tuning,
  });
}

export { NativeConnection };
