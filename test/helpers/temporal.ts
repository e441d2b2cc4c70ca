/**
 * Helpers for tests that talk to the shared Temporal dev server started by test/global-setup.ts.
 *
 *   const { client, close } = await connectTestClient();           // remember: await close()
 *   await runTestWorker({ activities, workflowBundle: 'shared' }, async ({ client, taskQueue }) => {
 *     await client.workflow.execute(myWorkflow, { taskQueue, workflowId: uniqueWorkflowId('pay'), args: [] });
 *   });
 *
 * Everything opened here is closed here, even when the test body throws, so test files never hang on
 * open handles.
 */
import { createHash, randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import type { ClientOptions } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import type { WorkerOptions } from '@temporalio/worker';
import { clientInterceptors } from '../../client/ask-again';

function requireEnv(name: string): string {
  const value = process.env[name];
  if (!value) {
    throw new Error(
      `${name} is not set: run tests through jest so that test/global-setup.ts starts the server`,
    );
  }
  return value;
}

/** host:port of the shared dev server. */
export function testAddress(): string {
  return requireEnv('TEMPORAL_TEST_ADDRESS');
}

/** Namespace on the shared dev server (search attributes from common/search-attributes.ts registered). */
export function testNamespace(): string {
  return process.env.TEMPORAL_TEST_NAMESPACE || 'default';
}

/** Path of the workflow bundle built once per run from workflows/index.ts; throws if there is none. */
export function sharedWorkflowBundlePath(): string {
  const bundle = process.env.PAYSAGA_TEST_WORKFLOW_BUNDLE;
  if (bundle) return bundle;
  const error = process.env.PAYSAGA_TEST_WORKFLOW_BUNDLE_ERROR;
  if (error) throw new Error(`bundling workflows/index.ts failed in global setup:\n${error}`);
  throw new Error('no shared workflow bundle: workflows/index.ts did not exist when the test run started');
}

/** A task queue name no other test (or other run against the same server) uses. */
export function uniqueTaskQueue(prefix = 'test'): string {
  return `${prefix}-${randomUUID()}`;
}

/** A workflow id no other test uses. */
/**
 * A worker deployment of a task queue's own (PAYSAGA_DEPLOYMENT): versioned workers of tests that share
 * the run's dev server never route each other's work, whichever build each runs.
 */
export function testDeployment(taskQueue: string): string {
  return `t-${createHash('sha256').update(taskQueue).digest('hex').slice(0, 20)}`;
}

export function uniqueWorkflowId(prefix = 'wf'): string {
  return `${prefix}-${randomUUID()}`;
}

export interface TestClient {
  client: Client;
  connection: Connection;
  /** Closes the connection; call it in afterAll/finally. */
  close(): Promise<void>;
}

/** Connection + Client to the shared dev server. */
export async function connectTestClient(
  options: Omit<ClientOptions, 'connection'> = {},
): Promise<TestClient> {
  const connection = await Connection.connect({ address: testAddress() });
  const client = new Client({
    namespace: testNamespace(),
    interceptors: clientInterceptors(),
    ...options,
    connection,
  });
  return { client, connection, close: () => connection.close() };
}

/** Runs `fn` with a client to the shared server and always closes it. */
export async function withTestClient<T>(fn: (client: Client) => Promise<T>): Promise<T> {
  const { client, close } = await connectTestClient();
  try {
    return await fn(client);
  } finally {
    await close();
  }
}

export interface RunTestWorkerOptions {
  /** Defaults to a fresh `uniqueTaskQueue()`. */
  taskQueue?: string;
  activities?: object;
  /**
   * Workflow code for the worker:
   *  - `'shared'`: the bundle built once per run from workflows/index.ts (PAYSAGA_TEST_WORKFLOW_BUNDLE)
   *  - a file path: a bundle written by bundleWorkflowCode
   *  - `{ code }` / `{ codePath }`: as WorkerOptions.workflowBundle
   *  - omitted: no workflows unless `workflowsPath` is given (activity-only worker)
   */
  workflowBundle?: 'shared' | string | NonNullable<WorkerOptions['workflowBundle']>;
  /** Bundle this path on the fly instead (slow: several seconds). */
  workflowsPath?: string;
  /** Anything else for Worker.create (connection, namespace and taskQueue are set by the helper). */
  workerOptions?: Partial<Omit<WorkerOptions, 'connection' | 'namespace' | 'taskQueue'>>;
}

export interface TestWorkerContext {
  taskQueue: string;
  worker: Worker;
  /** A client to the shared server, closed after `fn`. */
  client: Client;
}

function toWorkflowBundle(
  bundle: RunTestWorkerOptions['workflowBundle'],
): WorkerOptions['workflowBundle'] | undefined {
  if (bundle === undefined) return undefined;
  if (bundle === 'shared') return { codePath: sharedWorkflowBundlePath() };
  if (typeof bundle === 'string') return { codePath: bundle };
  return bundle;
}

/**
 * Creates a Worker on a NativeConnection to the shared server, runs `fn` while it polls, then shuts the
 * worker down and closes every connection, whether `fn` resolves or throws. Returns what `fn` returns.
 */
export async function runTestWorker<T>(
  options: RunTestWorkerOptions,
  fn: (ctx: TestWorkerContext) => Promise<T>,
): Promise<T> {
  const taskQueue = options.taskQueue ?? uniqueTaskQueue();
  const workflowBundle = toWorkflowBundle(options.workflowBundle);
  const nativeConnection = await NativeConnection.connect({ address: testAddress() });
  let testClient: TestClient | undefined;
  try {
    testClient = await connectTestClient();
    const client = testClient.client;
    const worker = await Worker.create({
      ...options.workerOptions,
      connection: nativeConnection,
      namespace: testNamespace(),
      taskQueue,
      ...(options.activities ? { activities: options.activities } : {}),
      ...(workflowBundle ? { workflowBundle } : {}),
      ...(options.workflowsPath ? { workflowsPath: options.workflowsPath } : {}),
    });
    return await worker.runUntil(() => fn({ taskQueue, worker, client }));
  } finally {
    await testClient?.close();
    await nativeConnection.close();
  }
}
