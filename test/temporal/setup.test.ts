/**
 * `paysaga setup` as a real process against the run's Temporal dev server and store, configured only by
 * TEMPORAL_* and PAYSAGA_DATABASE_* variables: on a fresh namespace and schema the first run registers the
 * namespace, adds every paysaga search attribute and applies every migration of the store; the second
 * run changes nothing and succeeds, and a workflow in the namespace can then set them. A
 * namespace where one of the names has another type is refused, and nothing is added to it; attributes
 * that are not paysaga's are left as they are.
 */
import { randomUUID } from 'node:crypto';
import { Client } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { NativeConnection, Worker } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { PAYSAGA_SEARCH_ATTRIBUTES, searchAttributeSpecs } from '../../common/search-attributes';
import type { SetupCommandReport } from '../../cli/commands/setup';
import { MIGRATIONS } from '../../store/migrations';
import { startApiFromEnv } from '../../api/server';
import { startWorkerFromEnv } from '../../workers/main';
import { greetAndTagWorkflow } from '../fixtures/trivial-workflow';
import { generateTestKeys } from '../helpers/keys';
import {
  connectTestClient,
  sharedWorkflowBundlePath,
  testAddress,
  uniqueTaskQueue,
  uniqueWorkflowId,
  type TestClient,
  testDeployment,
} from '../helpers/temporal';
import { testStoreEnv } from '../helpers/store';
import { runPaysaga, type CliRun } from '../helpers/cli-run';
import {
  assertSearchAttributesRegistered,
  SearchAttributesMissingError,
} from '../../platform/search-attribute-check';

jest.setTimeout(90_000);

const { IndexedValueType } = temporal.api.enums.v1;

function setup(
  namespace: string,
  args: string[] = ['--json'],
  store: Partial<ReturnType<typeof testStoreEnv>> = {},
): Promise<CliRun> {
  return runPaysaga(['setup', ...args], {
    ...store,
    TEMPORAL_ADDRESS: testAddress(),
    TEMPORAL_NAMESPACE: namespace,
    TEMPORAL_CONFIG_FILE: '',
  });
}

function report(run: CliRun): SetupCommandReport {
  if (run.code !== 0) throw new Error(`paysaga setup exited ${run.code}\n${run.stdout}\n${run.stderr}`);
  return JSON.parse(run.stdout.trim().split('\n').pop()!) as SetupCommandReport;
}

let test_: TestClient;
beforeAll(async () => {
  test_ = await connectTestClient();
});
afterAll(async () => {
  await test_?.close();
});

const ALL = searchAttributeSpecs(PAYSAGA_SEARCH_ATTRIBUTES);

test('twice on a fresh namespace and store: registers, adds and migrates everything, then changes nothing', async () => {
  const namespace = `paysaga-setup-${randomUUID()}`;
  const operator = test_.connection.operatorService;
  const store = testStoreEnv();

  const first = report(await setup(namespace, ['--json'], store));
  expect(first).toEqual({
    namespace,
    namespaceOutcome: 'registered',
    added: ALL,
    present: [],
    changed: true,
    store: { schema: store.PAYSAGA_DATABASE_SCHEMA, applied: Object.keys(MIGRATIONS) },
  });
  const described = await test_.connection.workflowService.describeNamespace({ namespace });
  expect(Number(described.config?.workflowExecutionRetentionTtl?.seconds)).toBe(30 * 86_400);
  const listed = (await operator.listSearchAttributes({ namespace })).customAttributes ?? {};
  expect(listed).toMatchObject({
    PaymentKind: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
    PaymentStatus: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
    ClientReference: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
    AmountMinor: IndexedValueType.INDEXED_VALUE_TYPE_INT,
    CurrencyCode: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  });

  const secondRun = await setup(namespace, [], store);
  expect(secondRun.code).toBe(0);
  expect(secondRun.stdout).toContain(`namespace ${namespace}: exists`);
  expect(secondRun.stdout).toContain('store: every migration applied already');
  expect(secondRun.stdout).toContain('nothing to change');
  expect(report(await setup(namespace, ['--json'], store))).toEqual({
    namespace,
    namespaceOutcome: 'exists',
    added: [],
    present: ALL,
    changed: false,
    store: { schema: store.PAYSAGA_DATABASE_SCHEMA, applied: [] },
  });
  // Without a store configured, setup says so and leaves the store alone.
  const noStore = report(await setup(namespace));
  expect(noStore.store).toBeNull();
  expect((await operator.listSearchAttributes({ namespace })).customAttributes).toEqual(listed);

  // The namespace is usable: a workflow there sets paysaga's typed search attributes.
  const taskQueue = uniqueTaskQueue('setup');
  const native = await NativeConnection.connect({ address: testAddress() });
  const worker = await Worker.create({
    connection: native,
    namespace,
    taskQueue,
    workflowsPath: require.resolve('../fixtures/trivial-workflow'),
    activities: { greet: async (name: string) => `hi ${name}` },
  });
  const client = new Client({ connection: test_.connection, namespace });
  const workflowId = uniqueWorkflowId('setup');
  try {
    await worker.runUntil(
      client.workflow.execute(greetAndTagWorkflow, { taskQueue, workflowId, args: ['setup'] }),
    );
  } finally {
    await native.close();
  }
  const { typedSearchAttributes } = await client.workflow.getHandle(workflowId).describe();
  expect(typedSearchAttributes.getAll().map((p) => [p.key.name, p.value])).toEqual(
    expect.arrayContaining([
      ['PaymentStatus', 'succeeded'],
      ['AmountMinor', 1050],
    ]),
  );
});

/** A new namespace (not set up) that already has these search attributes. */
async function namespaceWith(
  searchAttributes: Record<string, temporal.api.enums.v1.IndexedValueType>,
): Promise<string> {
  const namespace = `paysaga-setup-${randomUUID()}`;
  const { workflowService, operatorService } = test_.connection;
  await workflowService.registerNamespace({
    namespace,
    workflowExecutionRetentionPeriod: msToTs(86_400_000),
  });
  // A namespace just registered may take a moment to be known everywhere.
  for (let i = 0; ; i++) {
    try {
      await operatorService.addSearchAttributes({ namespace, searchAttributes });
      return namespace;
    } catch (err) {
      if (i > 40) throw err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

test('an attribute of another type is refused by name and nothing is added', async () => {
  const namespace = await namespaceWith({ AmountMinor: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD });
  const run = await setup(namespace, []);
  expect(run.code).toBe(1);
  expect(run.stderr).toContain('AmountMinor is Keyword, paysaga needs Int');
  const listed =
    (await test_.connection.operatorService.listSearchAttributes({ namespace })).customAttributes ?? {};
  expect(Object.keys(listed)).toEqual(['AmountMinor']);
});

test('attributes paysaga does not use are left alone, and neither setup nor the start check minds them', async () => {
  const others = {
    EventTypes: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST,
    LastEventAt: IndexedValueType.INDEXED_VALUE_TYPE_DATETIME,
  };
  const namespace = await namespaceWith(others);
  await expect(assertSearchAttributesRegistered(test_.connection, namespace)).rejects.toThrow(
    SearchAttributesMissingError,
  );
  expect(report(await setup(namespace))).toEqual({
    namespace,
    namespaceOutcome: 'exists',
    added: ALL,
    present: [],
    changed: true,
    store: null,
  });
  expect(report(await setup(namespace))).toMatchObject({ added: [], present: ALL, changed: false });
  const listed =
    (await test_.connection.operatorService.listSearchAttributes({ namespace })).customAttributes ?? {};
  expect(listed).toMatchObject(others);
  await expect(assertSearchAttributesRegistered(test_.connection, namespace)).resolves.toBeUndefined();
});

test('worker and API refuse a namespace nobody set up, and start once paysaga setup ran', async () => {
  const namespace = `paysaga-setup-${randomUUID()}`;
  const { workflowService, operatorService } = test_.connection;
  await workflowService.registerNamespace({
    namespace,
    workflowExecutionRetentionPeriod: msToTs(86_400_000),
  });
  // Until the new namespace is known everywhere.
  for (let i = 0; ; i++) {
    try {
      await operatorService.listSearchAttributes({ namespace });
      break;
    } catch (err) {
      if (i > 40) throw err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  const keys = generateTestKeys();
  const taskQueue = uniqueTaskQueue('not-set-up');
  const env: NodeJS.ProcessEnv = {
    TEMPORAL_ADDRESS: testAddress(),
    TEMPORAL_NAMESPACE: namespace,
    TEMPORAL_CONFIG_FILE: '',
    PAYSAGA_TASK_QUEUE: taskQueue,
    PAYSAGA_DEPLOYMENT: testDeployment(taskQueue),
    PAYSAGA_PROVIDER_URL: 'http://127.0.0.1:9',
    PAYSAGA_PROJECT_ID: 'proj_1',
    PAYSAGA_PARTNER_PRIVATE_KEY: keys.paths.partnerPrivate,
    PAYSAGA_PROVIDER_TEST_SERVICE_KEYS: keys.paths.servicePublic,
    PAYSAGA_API_TOKENS: 'token'.repeat(8),
    PAYSAGA_ALLOW_UNENCRYPTED: 'true',
    PAYSAGA_WORKFLOW_BUNDLE: sharedWorkflowBundlePath(),
    ...testStoreEnv(),
    PAYSAGA_LOG_LEVEL: 'silent',
  };
  const notSetUp = new Error(
    `namespace ${namespace} is not set up for paysaga (search attributes: missing PaymentKind, PaymentStatus, ClientReference, AmountMinor, CurrencyCode, NeedsAttention, CreatedAt): run \`paysaga setup\` with the same Temporal settings first`,
  );
  await expect(startWorkerFromEnv({ env, shutdownSignals: [] })).rejects.toThrow(notSetUp);
  await expect(
    startApiFromEnv(env, {
      public: { port: 0, host: '127.0.0.1' },
      internal: { port: 0, host: '127.0.0.1' },
    }),
  ).rejects.toThrow(notSetUp);

  expect(report(await setup(namespace)).changed).toBe(true);
  const worker = await startWorkerFromEnv({ env, shutdownSignals: [] });
  await worker.shutdown();
  const api = await startApiFromEnv(env, {
    public: { port: 0, host: '127.0.0.1' },
    internal: { port: 0, host: '127.0.0.1' },
  });
  await api.close();
});
