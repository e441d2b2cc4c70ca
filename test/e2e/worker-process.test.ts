/**
 * `paysaga worker` as a real process: configured only by environment variables, running the prebuilt
 * workflow bundle, it carries a card checkout to the end (polling only, no webhooks), logs without card
 * data, starts the task queue's reconciler when PAYSAGA_RECONCILE_EVERY_MS asks for it, and on SIGTERM
 * stops polling and exits 0 by itself.
 */
import { request } from 'undici';
import { PaymentsClient } from '../../client/payments-client';
import { reconcilerWorkflowId } from '../../client/reconciler';
import { reconcilerQuery } from '../../common/reconciler';
import { CardDetails, ProviderClient } from '../../provider';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox';
import { TEST_SETTINGS } from '../helpers/stack';
import { testStore, type TestStore } from '../helpers/store';
import { spawnWorkerProcess } from '../helpers/worker-process';
import { connectTestClient, uniqueTaskQueue, type TestClient } from '../helpers/temporal';
import { finalView } from '../helpers/final';
import { freePort } from '../../cli/dev/ports';
import { TEST_CARD } from '../../sandbox/test-cards';

const PAN = TEST_CARD.mastercard;

describe('paysaga worker (process)', () => {
  let sandbox: TestSandbox;
  let store: TestStore;
  let temporal: TestClient;
  let provider: ProviderClient;

  beforeAll(async () => {
    sandbox = await startTestSandbox({ projects: [{ webhooks: false }] });
    store = await testStore();
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
    await store?.close();
  });

  it('runs a session with the prebuilt bundle, starts the reconciler, exports metrics, and exits 0 on SIGTERM', async () => {
    const taskQueue = uniqueTaskQueue('worker-proc');
    const metricsPort = await freePort('127.0.0.1');
    const worker = spawnWorkerProcess(sandbox, taskQueue, {
      ...store.env,
      PAYSAGA_WORKER_METRICS: `127.0.0.1:${metricsPort}`,
      PAYSAGA_RECONCILE_EVERY_MS: '500',
      PAYSAGA_RECONCILE_WINDOW_MS: '600000',
    });
    const { child } = worker;
    try {
      await worker.polling();
      expect(worker.output()).toMatch(/"workflowCode":"[^"]*(env|PAYSAGA_WORKFLOW_BUNDLE)[^"]*"/i);

      const payments = new PaymentsClient({
        store,
        temporal: temporal.client,
        provider,
        taskQueue,
        settings: { ...TEST_SETTINGS, polling: { ...TEST_SETTINGS.polling, webhooks: false } },
      });
      const started = await payments.sessions.startCardCheckout({
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
      const result = await finalView(temporal.client, started.sessionId);
      expect(result.phase).toBe('succeeded');
      expect(worker.output()).toContain(started.sessionId);
      expect(worker.output().includes(PAN)).toBe(false); // not toContain: a failure would print it

      // PAYSAGA_RECONCILE_EVERY_MS: the worker started the queue's reconciler, which re-reads the
      // closed session from the provider (webhooks are off, so nothing else would).
      const reconciler = temporal.client.workflow.getHandle(reconcilerWorkflowId(taskQueue));
      expect((await reconciler.describe()).status.name).toBe('RUNNING');
      const syncDeadline = Date.now() + 60_000;
      let seen = await reconciler.query(reconcilerQuery);
      while (seen.totals.checked < 1 && Date.now() < syncDeadline) {
        await new Promise((r) => setTimeout(r, 250));
        seen = await reconciler.query(reconcilerQuery);
      }
      expect(seen.totals.checked).toBeGreaterThanOrEqual(1);
      expect(seen.totals.failed).toBe(0);
      await reconciler.terminate('test over');

      // The SDK's worker metrics for Prometheus, e.g. workflow task and activity counters.
      const metrics = await request(`http://127.0.0.1:${metricsPort}/metrics`);
      expect(metrics.statusCode).toBe(200);
      expect(await metrics.body.text()).toMatch(
        /^temporal_activity_execution_latency_count\{[^}]*activity_type="approve"[^}]*task_queue="[^"]+"[^}]*\} [1-9]/m,
      );

      child.kill('SIGTERM');
      expect((await worker.exited).code).toBe(0);
      expect(worker.output()).toContain('worker stopped');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 200_000);
});
