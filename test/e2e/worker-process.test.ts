/**
 * `paysaga worker` as a real process: configured only by environment variables, running the prebuilt
 * workflow bundle, it carries a card checkout to the end (polling only, no webhooks), logs without card
 * data, and on SIGTERM stops polling and exits 0 by itself.
 */
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { PaymentsClient } from '../../client/payments-client';
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

  it('runs a session with the prebuilt bundle and exits 0 on SIGTERM', async () => {
    const taskQueue = uniqueTaskQueue('worker-proc');
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

      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(out).toContain('worker stopped');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 200_000);
});
