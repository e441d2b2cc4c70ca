import type { DataConverter } from '@temporalio/common';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { createIntakeActivities } from '../activities/intake-activities';
import { createProviderActivities } from '../activities/provider-activities';
import { createReconcileActivities } from '../activities/reconcile-activities';
import type { ProviderClient } from '../provider';
import { isNewer } from '../workflows/snapshot';

export interface PaysagaWorkerOptions {
  connection: NativeConnection;
  namespace?: string;
  taskQueue: string;
  /**
   * The provider client of the activities. Retries belong to Temporal's policy (visible in history), so
   * give it `maxRetries: 0` (startWorkerFromEnv does).
   */
  provider: ProviderClient;
  /** paysaga's signed back_url of a session (DESIGN decision 14), when a public URL is configured. */
  returnUrl?: (sessionId: string) => string | undefined;
  /** A prebuilt bundle (production) — else workflows are bundled from source at start. */
  workflowBundlePath?: string;
  /** With the payload codec (common/codec.ts), so that what enters Temporal is encrypted. */
  dataConverter?: DataConverter;
  tuning?: Pick<
    WorkerOptions,
    'maxConcurrentActivityTaskExecutions' | 'maxConcurrentWorkflowTaskExecutions' | 'maxCachedWorkflows'
  >;
}

/** The one worker of paysaga: every session workflow and its activities on one task queue. */
export async function createPaysagaWorker(o: PaysagaWorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: o.connection,
    namespace: o.namespace ?? 'default',
    taskQueue: o.taskQueue,
    activities: {
      ...createProviderActivities(o.provider),
      ...createIntakeActivities({ provider: o.provider, ...(o.returnUrl ? { returnUrl: o.returnUrl } : {}) }),
      ...createReconcileActivities({ provider: o.provider, taskQueue: o.taskQueue, isNewer }),
    },
    ...(o.dataConverter ? { dataConverter: o.dataConverter } : {}),
    ...(o.workflowBundlePath
      ? { workflowBundle: { codePath: o.workflowBundlePath } }
      : { workflowsPath: require.resolve('../workflows') }),
    // Workers stop on SIGINT/SIGTERM after in-flight activities finish (the SDK's default signals).
    shutdownGraceTime: '10s',
    ...o.tuning,
  });
}

export { NativeConnection };
