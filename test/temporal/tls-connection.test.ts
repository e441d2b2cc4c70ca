/**
 * Temporal over TLS, configured the standard way (platform/temporal-config.ts). The run's dev server
 * serves plaintext, so a local TLS proxy (test/helpers/tls-proxy.ts, certificates made by openssl now)
 * stands in front of it, and nothing but the proxy's address is given to paysaga:
 *
 *  - TEMPORAL_* variables (own CA): the paysaga worker and the paysaga API, both started from the
 *    environment, run a card checkout end to end through the proxy; a TLS client reads its result.
 *  - a profile of TEMPORAL_CONFIG_FILE (mTLS, server name): a client and an SDK worker on the native
 *    connection run a workflow; the same profile without the client certificate is refused.
 *  - a CA that did not sign the server's certificate is refused by client, worker and API alike.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { request } from 'undici';
import { finalView } from '../helpers/final';
import { startApiFromEnv, type RunningApi } from '../../api/server';
import { temporalSettingsFromEnv } from '../../platform/temporal-config';
import {
  connectTemporalClient,
  TemporalConnectError,
  temporalConnectionOptions,
} from '../../platform/temporal-connection';
import { startWorkerFromEnv, type RunningWorker } from '../../workers/main';
import { Client } from '@temporalio/client';
import { trivialWorkflow } from '../fixtures/trivial-workflow';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox';
import {
  sharedWorkflowBundlePath,
  testAddress,
  testNamespace,
  uniqueTaskQueue,
  uniqueWorkflowId,
  testDeployment,
} from '../helpers/temporal';
import {
  generateTestCertificates,
  startTlsProxy,
  type TestCertificates,
  type TlsProxy,
} from '../helpers/tls-proxy';
import { FRICTIONLESS, rub } from '../helpers/workflow-test';
import { testStoreEnv } from '../helpers/store';

const TLS_TOKEN = `tls-test-token-${'t'.repeat(24)}`;

jest.setTimeout(90_000);

let certs: TestCertificates;
let proxy: TlsProxy;
let mtlsProxy: TlsProxy;

beforeAll(async () => {
  certs = generateTestCertificates();
  proxy = await startTlsProxy({ target: testAddress(), certs });
  mtlsProxy = await startTlsProxy({ target: testAddress(), certs, requireClientCert: true });
});

afterAll(async () => {
  await proxy?.close();
  await mtlsProxy?.close();
  certs?.remove();
});

/** No config file of the machine's user may leak into these tests. */
const base = (): NodeJS.ProcessEnv => ({ PATH: process.env.PATH, TEMPORAL_CONFIG_FILE: '' });

describe('TEMPORAL_* variables: own CA', () => {
  let sandbox: TestSandbox;
  let worker: RunningWorker | undefined;
  let api: RunningApi | undefined;
  let connection: Connection | undefined;

  beforeAll(async () => {
    sandbox = await startTestSandbox({ projects: [{ webhooks: false }] });
  });
  afterAll(async () => {
    await api?.close();
    await worker?.shutdown();
    await connection?.close();
    await sandbox?.close();
  });

  test('the paysaga worker and API run a card checkout through the TLS proxy', async () => {
    const before = proxy.sessions();
    const taskQueue = uniqueTaskQueue('tls');
    const env: NodeJS.ProcessEnv = {
      ...base(),
      TEMPORAL_ADDRESS: proxy.address,
      TEMPORAL_NAMESPACE: testNamespace(),
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: certs.caCert,
      PAYSAGA_TASK_QUEUE: taskQueue,
      PAYSAGA_DEPLOYMENT: testDeployment(taskQueue),
      PAYSAGA_ALLOW_UNENCRYPTED: 'true',
      PAYSAGA_PROVIDER_URL: sandbox.url,
      PAYSAGA_PROJECT_ID: sandbox.projectId,
      PAYSAGA_PARTNER_PRIVATE_KEY: sandbox.keys.paths.partnerPrivate,
      PAYSAGA_PROVIDER_TEST_SERVICE_KEYS: sandbox.keys.paths.servicePublic,
      PAYSAGA_WORKFLOW_BUNDLE: sharedWorkflowBundlePath(),
      PAYSAGA_API_TOKENS: TLS_TOKEN,
      PAYSAGA_LOG_LEVEL: 'silent',
      ...testStoreEnv(),
    };
    worker = await startWorkerFromEnv({ env, shutdownSignals: [] });
    expect(worker.address).toBe(proxy.address);
    api = await startApiFromEnv(env, {
      public: { port: 0, host: '127.0.0.1' },
      internal: { port: 0, host: '127.0.0.1' },
    });

    const health = await request(`${api.url}/healthz`);
    expect(health.statusCode).toBe(200);
    expect(await health.body.json()).toMatchObject({ temporal: 'ok' });

    const res = await request(`${api.url}/v1/checkouts?wait=15000`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TLS_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        method: 'card',
        reference: uniqueWorkflowId('tls-checkout'),
        amount: rub(1_500),
        card: { card_number: FRICTIONLESS, card_exp_month: '12', card_exp_year: '30', card_code: '123' },
        customer: { user_id: 'u1' },
        settings: { polling: { webhooks: false, initialMs: 200, maxMs: 1_000 } },
      }),
    });
    const created = (await res.body.json()) as { sessionId: string };
    expect(res.statusCode).toBe(201);

    connection = await connectTemporalClient(temporalSettingsFromEnv(env));
    const client = new Client({ connection, namespace: testNamespace() });
    const result = await finalView(client, created.sessionId);
    expect(result.phase).toBe('succeeded');
    // Worker (native), API and this client each opened their own TLS sessions through the proxy.
    expect(proxy.sessions() - before).toBeGreaterThanOrEqual(3);
  });
});

describe('a profile of TEMPORAL_CONFIG_FILE: mTLS with a server name', () => {
  function profileFile(withClientCert: boolean): string {
    const file = path.join(certs.dir, withClientCert ? 'mtls.toml' : 'no-client-cert.toml');
    const lines = [
      '[profile.secure]',
      `address = "${mtlsProxy.address}"`,
      `namespace = "${testNamespace()}"`,
      '[profile.secure.tls]',
      'server_name = "temporal.paysaga.test"',
      `server_ca_cert_path = "${certs.caCert}"`,
      ...(withClientCert
        ? [`client_cert_path = "${certs.clientCert}"`, `client_key_path = "${certs.clientKey}"`]
        : []),
      '',
    ];
    fs.writeFileSync(file, lines.join('\n'));
    return file;
  }

  test('a client and a worker on the native connection run a workflow', async () => {
    const settings = temporalSettingsFromEnv({
      ...base(),
      TEMPORAL_CONFIG_FILE: profileFile(true),
      TEMPORAL_PROFILE: 'secure',
    });
    expect(settings.address).toBe(mtlsProxy.address);
    const before = mtlsProxy.sessions();
    const connection = await connectTemporalClient(settings);
    const native = await NativeConnection.connect(temporalConnectionOptions(settings));
    try {
      const taskQueue = uniqueTaskQueue('mtls');
      const worker = await Worker.create({
        connection: native,
        namespace: settings.namespace,
        taskQueue,
        workflowsPath: require.resolve('../fixtures/trivial-workflow'),
      });
      const client = new Client({ connection, namespace: settings.namespace });
      const result = await worker.runUntil(
        client.workflow.execute(trivialWorkflow, {
          taskQueue,
          workflowId: uniqueWorkflowId('mtls'),
          args: ['tls'],
        }),
      );
      expect(result).toBe('hello, tls');
    } finally {
      await connection.close();
      await native.close();
    }
    expect(mtlsProxy.sessions() - before).toBeGreaterThanOrEqual(2);
  });

  test('without the client certificate the server refuses the connection', async () => {
    const settings = temporalSettingsFromEnv({
      ...base(),
      TEMPORAL_CONFIG_FILE: profileFile(false),
      TEMPORAL_PROFILE: 'secure',
    });
    const refusedBefore = mtlsProxy.refused();
    await expect(connectTemporalClient(settings, { connectTimeoutMs: 3_000 })).rejects.toThrow(
      TemporalConnectError,
    );
    expect(mtlsProxy.refused()).toBeGreaterThan(refusedBefore);
  });
});

describe('a CA that did not sign the server certificate', () => {
  const env = (): NodeJS.ProcessEnv => ({
    ...base(),
    TEMPORAL_ADDRESS: proxy.address,
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: certs.otherCaCert,
  });

  test('is refused by the client connection, with the target named', async () => {
    const sessions = proxy.sessions();
    const settings = temporalSettingsFromEnv(env());
    const err = await connectTemporalClient(settings, { connectTimeoutMs: 3_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TemporalConnectError);
    expect((err as Error).message).toContain(
      `cannot connect to Temporal at ${proxy.address} namespace default, TLS (own CA)`,
    );
    expect(proxy.sessions()).toBe(sessions);
    expect(proxy.refused()).toBeGreaterThan(0);
  });

  test('is refused by the worker (native connection)', async () => {
    const sessions = proxy.sessions();
    await expect(
      NativeConnection.connect(temporalConnectionOptions(temporalSettingsFromEnv(env()))),
    ).rejects.toThrow();
    expect(proxy.sessions()).toBe(sessions);
  });
});
