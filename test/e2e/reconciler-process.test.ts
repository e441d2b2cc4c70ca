/**
 * The reconciler as production runs it: `paysaga worker` processes configured by PAYSAGA_RECONCILE_* and
 * PAYSAGA_WORKER_METRICS. Two workers starting at once start one reconciler; a worker SIGKILLed and
 * another started leave that same chain going (each pass continues as new into the next). A chargeback made behind paysaga's back (webhooks off) is
 * found, shows in GET /v1/reconciliation (totals, pass, findings) and in the workers' Prometheus counter
 * `paysaga_reconciler_findings_total{outcome="repaired"}`.
 */
import { request } from 'undici';
import { buildApi, type PaysagaApi } from '../../api/app';
import { freePort } from '../../cli/dev/ports';
import { PaymentsClient } from '../../client/payments-client';
import { reconcilerWorkflowId } from '../../common/reconciler';
import { mergeSettings } from '../../common/settings';
import { createWebhookVerifier, ProviderClient } from '../../provider';
import { listenLocally } from '../api/api-stack';
import { finalView } from '../helpers/final';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox';
import { TEST_SETTINGS } from '../helpers/stack';
import { connectTestClient, uniqueTaskQueue, type TestClient } from '../helpers/temporal';
import { testStore, type TestStore } from '../helpers/store';
import { spawnWorkerProcess, type WorkerProcess } from '../helpers/worker-process';
import { until } from '../helpers/until';
import { card, FRICTIONLESS, references, rub } from '../helpers/workflow-test';

jest.setTimeout(180_000);

const ref = references('recon-proc');

/** The counter's value per outcome on one worker's /metrics (0 when absent). */
async function findings(port: number): Promise<{ text: string; repaired: number }> {
  const res = await request(`http://127.0.0.1:${port}/metrics`);
  const text = await res.body.text();
  let repaired = 0;
  for (const line of text.split('\n'))
    if (/^paysaga_reconciler_findings_total\{[^}]*outcome="repaired"/.test(line))
      repaired += Number(line.split(' ').at(-1));
  return { text, repaired };
}

describe('reconciler with worker processes', () => {
  const taskQueue = uniqueTaskQueue('recon-proc');
  const workflowId = reconcilerWorkflowId(taskQueue);
  let sandbox: TestSandbox;
  let store: TestStore;
  let temporal: TestClient;
  let provider: ProviderClient;
  let payments: PaymentsClient;
  let api: PaysagaApi;
  let apiUrl: string;
  const workers: { w: WorkerProcess; metricsPort: number }[] = [];

  const spawn = async () => {
    const metricsPort = await freePort('127.0.0.1');
    const w = spawnWorkerProcess(sandbox, taskQueue, {
      ...store.env,
      PAYSAGA_RECONCILE_EVERY_MS: '1500',
      PAYSAGA_RECONCILE_WINDOW_MS: '3600000',
      PAYSAGA_RECONCILE_PAGE_SIZE: '20',
      PAYSAGA_WORKER_METRICS: `127.0.0.1:${metricsPort}`,
      PAYSAGA_LOG_LEVEL: 'info',
    });
    const entry = { w, metricsPort };
    workers.push(entry);
    return entry;
  };
  /** The runs of the reconciler's id by status: one chain, each pass continued as new into the next. */
  const runs = async () => {
    const out: { runId: string; status: string }[] = [];
    for await (const run of temporal.client.workflow.list({ query: `WorkflowId = '${workflowId}'` }))
      out.push({ runId: run.runId, status: run.status.name });
    return out;
  };
  const running = async () => (await runs()).filter((r) => r.status === 'RUNNING').map((r) => r.runId);
  /** Every run but the running one continued as new: no second reconciler, nothing ended otherwise. */
  const oneChain = async () => {
    const all = await runs();
    expect(all.filter((r) => r.status === 'RUNNING')).toHaveLength(1);
    expect(all.filter((r) => r.status !== 'RUNNING' && r.status !== 'CONTINUED_AS_NEW')).toEqual([]);
  };

  beforeAll(async () => {
    sandbox = await startTestSandbox({ projects: [{ webhooks: false }] });
    store = await testStore();
    temporal = await connectTestClient();
    provider = new ProviderClient({
      baseUrl: sandbox.url,
      projectId: sandbox.projectId,
      privateKey: sandbox.keys.partner.privateKey,
    });
    const settings = mergeSettings(TEST_SETTINGS, { followMs: 1_000, polling: { webhooks: false } });
    payments = new PaymentsClient({ temporal: temporal.client, provider, store, taskQueue, settings });
    api = buildApi({
      store,
      payments,
      provider,
      temporal: temporal.client,
      taskQueue,
      settings,
      verifyWebhook: createWebhookVerifier([sandbox.keys.service.publicPem]),
      apiTokens: ['t'],
    });
    apiUrl = (await listenLocally(api)).v1Url;
  }, 120_000);

  afterAll(async () => {
    for (const { w } of workers)
      if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
    await Promise.all(workers.map(({ w }) => w.exited));
    await temporal?.client.workflow
      .getHandle(workflowId)
      .terminate('test over')
      .catch(() => undefined);
    await api?.close();
    await provider?.close();
    await temporal?.close();
    await sandbox?.close();
    await store?.close();
  });

  const report = async () => {
    const res = await request(`${apiUrl}/v1/reconciliation`, { headers: { authorization: 'Bearer t' } });
    return { status: res.statusCode, body: (await res.body.json()) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
  };

  it('before any worker asks for it, the report says not_started', async () => {
    expect(await report()).toEqual({ status: 200, body: { workflowId, status: 'not_started' } });
  });

  it('two workers at once start one reconciler; a finding shows in the report and the metric; a restart keeps the one chain of runs', async () => {
    const [a, b] = await Promise.all([spawn(), spawn()]);
    await Promise.all([a!.w.polling(), b!.w.polling()]);
    await until('the reconciler is listed', running, (r) => r.length > 0);
    await oneChain();

    // A finished, closed session; then a chargeback no webhook tells paysaga about.
    const started = await payments.sessions.startCardCheckout({
      reference: ref('pay'),
      amount: rub(4_000),
      card: card(FRICTIONLESS),
      customer: { user_id: 'u-recon' },
    });
    const id = started.sessionId;
    expect((await finalView(temporal.client, id)).phase).toBe('succeeded');
    await until(
      'the session closes',
      async () => (await temporal.client.workflow.getHandle(id).describe()).status.name,
      (s) => s !== 'RUNNING',
    );
    const cb = await sandbox.plain('POST', '/sandbox/chargebacks', {
      session_id: id,
      sum_info: { sum: 900, currency_code: 'rub' },
    });
    expect(cb.status).toBe(200);

    const found = await until('the report names the repair', report, (r) =>
      (r.body.findings ?? []).some((f: { sessionId: string }) => f.sessionId === id),
    );
    expect(found.body).toMatchObject({ workflowId, status: 'running', listFailures: 0 });
    expect(found.body.findings.find((f: { sessionId: string }) => f.sessionId === id)).toMatchObject({
      outcome: 'repaired',
      detail: expect.stringMatching(/^reopened: provider completed/),
    });
    expect(found.body.totals.repaired).toBeGreaterThanOrEqual(1);
    expect(found.body.totals.checked).toBeGreaterThanOrEqual(1);
    const after = await until(
      'a finished pass after the finding',
      report,
      (r) => r.body.passes >= 1 && r.body.lastPass !== undefined,
    );
    expect(after.body.lastPass).toMatchObject({
      startedAt: expect.any(String),
      finishedAt: expect.any(String),
    });
    // The repair reopened the session; its new run records the chargeback a moment later.
    await until(
      'the session shows the chargeback',
      async () => (await payments.sessions.get(id)).totals.chargedBack,
      (charged) => charged === 900,
    );

    // The counter, on the worker that ran the reconciler's workflow task.
    const counted = await until(
      'the counter on a worker',
      async () => (await findings(a!.metricsPort)).repaired + (await findings(b!.metricsPort)).repaired,
      (n) => n >= 1,
      15_000,
    );
    expect(counted).toBeGreaterThanOrEqual(1);

    // One worker killed, another started with the same settings: still the one run.
    a!.w.child.kill('SIGKILL');
    await a!.w.exited;
    const c = await spawn();
    await c.w.polling();
    const described = await temporal.client.workflow.getHandle(workflowId).describe();
    expect(described.status.name).toBe('RUNNING');
    await oneChain();
  });
});
