/**
 * `paysaga worker` as a real process: configured only by environment variables, running the prebuilt
 * workflow bundle, it carries a card checkout to the end (polling only, no webhooks), logs without card
 * data, starts the task queue's reconciler when PAYSAGA_RECONCILE_EVERY_MS asks for it, and on SIGTERM
 * stops polling and exits 0 by itself.
 */
import { spawn } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import * as path from 'node:path';
import { request } from 'undici';
import { PaymentsClient } from '../../client/payments-client';
import { reconcilerWorkflowId } from '../../client/reconciler';
import { reconcilerQuery } from '../../workflows/definitions';
import { CardDetails, ProviderClient } from '../../provider';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox';
import { TEST_SETTINGS } from '../helpers/stack';
import {
  connectTestClient,
  sharedWorkflowBundlePath,
  testAddress,
  testNamespace,
  uniqueTaskQueue,
  type TestClient,
} from '../helpers/temporal';

const BIN = path.resolve(__dirname, '../../bin/paysaga.js');

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
const PAN = '5555555555554444';

describe('paysaga worker (process)', () => {
  let sandbox: TestSandbox;
  let temporal: TestClient;
  let provider: ProviderClient;

  beforeAll(async () => {
    sandbox = await startTestSandbox({ projects: [{ webhooks: false }] });
    temporal = await connectTestClient();
    provider = new ProviderClient({
      baseUrl: sandbox.url,
      projectId: sandbox.projectId,
      privateKey: sandbox.keys.partner.privateKey,
    });
  });
  afterAll(async () => {
    await provider?.close();
    await temporal?.close();
    await sandbox?.close();
  });

  it('runs a session with the prebuilt bundle, starts the reconciler, exports metrics, and exits 0 on SIGTERM', async () => {
    const taskQueue = uniqueTaskQueue('worker-proc');
    const metricsPort = await freePort();
    const child = spawn(process.execPath, [BIN, 'worker'], {
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: testAddress(),
        TEMPORAL_NAMESPACE: testNamespace(),
        PAYSAGA_TASK_QUEUE: taskQueue,
        PAYSAGA_PROVIDER_URL: sandbox.url,
        PAYSAGA_PROJECT_ID: sandbox.projectId,
        PAYSAGA_PARTNER_PRIVATE_KEY: sandbox.keys.paths.partnerPrivate,
        PAYSAGA_WORKFLOW_BUNDLE: sharedWorkflowBundlePath(),
        PAYSAGA_LOG_LEVEL: 'debug',
        PAYSAGA_WORKER_METRICS: `127.0.0.1:${metricsPort}`,
        PAYSAGA_RECONCILE_EVERY_MS: '500',
        PAYSAGA_RECONCILE_WINDOW_MS: '600000',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const deadline = Date.now() + 150_000; // a cold `tsc` build of dist/ may come first
      while (!out.includes('worker polling')) {
        if (Date.now() > deadline || child.exitCode !== null)
          throw new Error(`worker did not start:\n${out}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(out).toMatch(/"workflowCode":"[^"]*(env|PAYSAGA_WORKFLOW_BUNDLE)[^"]*"/i);

      const payments = new PaymentsClient({
        temporal: temporal.client,
        provider,
        taskQueue,
        settings: { ...TEST_SETTINGS, polling: { ...TEST_SETTINGS.polling, webhooks: false } },
      });
      const started = await payments.startCardCheckout({
        reference: `worker-proc-${Date.now()}`,
        amount: { amount: 4200, currency: 'rub' },
        card: new CardDetails({
          card_number: PAN,
          card_exp_month: '09',
          card_exp_year: '30',
          card_code: '321',
        }),
        customer: { user_id: 'u-proc' },
      });
      const result = await temporal.client.workflow.getHandle(started.sessionId).result();
      expect(result.phase).toBe('succeeded');
      expect(out).toContain(started.sessionId);
      expect(out).not.toContain(PAN);

      // PAYSAGA_RECONCILE_EVERY_MS: the worker started the queue's reconciler, which re-reads the
      // closed session from the provider (webhooks are off, so nothing else would).
      const reconciler = temporal.client.workflow.getHandle(reconcilerWorkflowId(taskQueue));
      expect((await reconciler.describe()).status.name).toBe('RUNNING');
      const syncDeadline = Date.now() + 60_000;
      let seen = await reconciler.query(reconcilerQuery);
      while (seen.synced < 1 && Date.now() < syncDeadline) {
        await new Promise((r) => setTimeout(r, 250));
        seen = await reconciler.query(reconcilerQuery);
      }
      expect(seen.synced).toBeGreaterThanOrEqual(1);
      expect(seen.failed).toBe(0);
      await reconciler.terminate('test over');

      // The SDK's worker metrics for Prometheus, e.g. workflow task and activity counters.
      const metrics = await request(`http://127.0.0.1:${metricsPort}/metrics`);
      expect(metrics.statusCode).toBe(200);
      expect(await metrics.body.text()).toMatch(
        /^temporal_workflow_completed\{[^}]*task_queue="[^"]+"[^}]*\} [1-9]/m,
      );

      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(out).toContain('worker stopped');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 200_000);
});
