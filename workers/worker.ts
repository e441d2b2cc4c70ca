import type { DataConverter } from '@temporalio/common';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import type { ProviderClient } from '../provider';
import { createSessionActivities } from '../activities/session-activities';
import { createReconcileActivities } from '../activities/reconcile-activities';
import { createSubscriptionActivities } from '../activities/subscription-activities';
import { DEFAULT_SETTINGS } from '../client/settings';
import type { SessionSettings } from '../workflows/types';

export interface PaysagaWorkerOptions {
  connection: NativeConnection;
  namespace?: string;
  taskQueue: string;
  provider: ProviderClient;
  /** A prebuilt bundle (production) — else workflows are bundled from source at start. */
  workflowBundlePath?: string;
  /** With the payload codec (common/codec.ts), so that what enters Temporal is encrypted. */
  dataConverter?: DataConverter;
  /** Settings of the late-event runs the reconciler starts (default: DEFAULT_SETTINGS). */
  settings?: SessionSettings;
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
      ...createSessionActivities(o.provider),
      ...createSubscriptionActivities(o.provider),
      ...createReconcileActivities({
        provider: o.provider,
        taskQueue: o.taskQueue,
        settings: o.settings ?? DEFAULT_SETTINGS,
      }),
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
