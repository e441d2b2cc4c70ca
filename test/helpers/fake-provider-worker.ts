/**
 * For a workflow test file on the time-skipping server: the server, and one worker of paysaga's real
 * workflow bundle whose activities are a fake provider per session (registered in `providers` by session
 * id), started before the file's tests and stopped after them.
 *
 *   const fx = useFakeProviderWorker('deadlines');
 *   fx.providers.set(sessionId, provider); await fx.env.client.workflow.start(..., { taskQueue: fx.taskQueue })
 */
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { bySession, type FakeProvider } from './fake-provider';
import { sharedWorkflowBundlePath } from './temporal';
import { startTimeSkipping } from './time-skipping';

export interface FakeProviderWorker {
  readonly env: TestWorkflowEnvironment;
  readonly taskQueue: string;
  readonly providers: Map<string, FakeProvider>;
}

export function useFakeProviderWorker(name: string): FakeProviderWorker {
  const providers = new Map<string, FakeProvider>();
  const taskQueue = `${name}-${randomUUID()}`;
  let env: TestWorkflowEnvironment | undefined;
  let worker: Worker | undefined;
  let working: Promise<void> | undefined;
  beforeAll(async () => {
    env = await startTimeSkipping();
    worker = await Worker.create({
      connection: env.nativeConnection,
      namespace: env.namespace ?? 'default',
      taskQueue,
      workflowBundle: { codePath: sharedWorkflowBundlePath() },
      activities: bySession(providers),
    });
    working = worker.run();
  });
  afterAll(async () => {
    worker?.shutdown();
    await working;
    await env?.teardown();
  });
  return {
    get env() {
      if (!env) throw new Error('the time-skipping server starts in beforeAll');
      return env;
    },
    taskQueue,
    providers,
  };
}
