/**
 * A `paysaga worker` process is SIGKILLed in the middle of a money-moving activity, after the provider
 * has carried the call out but before the worker has learned it. Two documented sandbox faults set that
 * up: `drop_after_commit` on the first transaction/approve (the approve is committed, the connection is
 * closed instead of answered) and `latency` on transaction/state (the activity's check of the unknown
 * outcome hangs at the provider); the worker is killed while that check hangs. A second worker process
 * on the same task queue gets the activity again once the dead attempt's startToCloseTimeout (45 s,
 * workflows/calls.ts) runs out. A retried money-moving call reads transaction/state before it sends
 * anything (activities/provider-activities.ts): the state shows the approve took effect, so nothing is
 * sent again, and the session succeeds with one hold and one capture in the ledger.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PaymentsClient } from '../../client/payments-client';
import { CardDetails, ProviderClient } from '../../provider';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox';
import { TEST_SETTINGS } from '../helpers/stack';
import { testStore, type TestStore } from '../helpers/store';
import { spawnWorkerProcess, type WorkerProcess } from '../helpers/worker-process';
import { connectTestClient, uniqueTaskQueue, type TestClient } from '../helpers/temporal';
import { finalView } from '../helpers/final';
import { TEST_CARD } from '../../sandbox/test-cards';

const PAN = TEST_CARD.visa;
const AMOUNT = 5_100;
/** How long the sandbox holds a transaction/state request (below the provider client's 30 s timeout). */
const STATE_LATENCY_MS = 20_000;
const APPROVE_PATH = '/api/v1/transaction/approve';
const STATE_PATH = '/api/v1/transaction/state';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs: number,
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** `promise`, or an error naming `what` after `ms`; the timer does not outlive the race. */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

interface ApiCall {
  atMs: number;
  key: string | undefined;
  /** the status answered; absent when no answer was sent (dropped connection, or not yet) */
  status?: number;
  /** when the connection of the exchange was closed or the answer was complete */
  closedAtMs?: number;
}

describe('paysaga worker (process) killed during a money-moving call', () => {
  let sandbox: TestSandbox;
  let store: TestStore;
  let temporal: TestClient;
  let provider: ProviderClient;
  /** transaction/approve and transaction/state requests that reached the sandbox (never their bodies). */
  const calls: Record<string, ApiCall[]> = { [APPROVE_PATH]: [], [STATE_PATH]: [] };
  const approveCalls = calls[APPROVE_PATH]!;
  const stateCalls = calls[STATE_PATH]!;

  beforeAll(async () => {
    sandbox = await startTestSandbox({ projects: [{ webhooks: false }] });
    store = await testStore();
    // A tap on the sandbox's own HTTP server, ahead of fastify: it sees the idempotency header and the
    // fate of every approve, which the sandbox does not report otherwise.
    sandbox.sandbox.app.server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
      const list = calls[req.url?.split('?')[0] ?? ''];
      if (!list) return;
      const header = req.headers['x-partner-idempotency-key'];
      const call: ApiCall = { atMs: Date.now(), key: Array.isArray(header) ? header[0] : header };
      list.push(call);
      res.on('finish', () => (call.status = res.statusCode));
      res.on('close', () => (call.closedAtMs = Date.now()));
    });
    temporal = await connectTestClient();
    provider = new ProviderClient({
      baseUrl: sandbox.url,
      projectId: sandbox.projectId,
      privateKey: sandbox.keys.partner.privateKey,
    });
  }, 240_000);

  afterAll(async () => {
    await provider?.close();
    await temporal?.close();
    await sandbox?.close();
    await store?.close();
  });

  async function stop(worker: WorkerProcess | undefined): Promise<void> {
    if (!worker || worker.child.exitCode !== null || worker.child.signalCode !== null) return;
    worker.child.kill('SIGKILL');
    await within(worker.exited, 10_000, 'the killed worker exits').catch(() => undefined);
  }

  it('SIGKILL after the provider took the approve, before the worker heard: the next worker reads the state and sends nothing again, one charge', async () => {
    const taskQueue = uniqueTaskQueue('worker-crash');
    let workerA: WorkerProcess | undefined;
    let workerB: WorkerProcess | undefined;
    let approving: Promise<{ view: { phase: string } } | { error: unknown }> | undefined;
    let sessionId: string | undefined;
    try {
      workerA = spawnWorkerProcess(sandbox, taskQueue, store.env);
      await workerA.polling();

      const payments = new PaymentsClient({
        store,
        temporal: temporal.client,
        provider,
        taskQueue,
        settings: { ...TEST_SETTINGS, polling: { ...TEST_SETTINGS.polling, webhooks: false } },
      });
      const started = await payments.sessions.startCardCheckout(
        {
          reference: `worker-crash-${Date.now()}`,
          amount: { amount: AMOUNT, currency: 'RUB' },
          card: new CardDetails({
            card_number: PAN,
            card_exp_month: '12',
            card_exp_year: '30',
            card_code: '123',
          }),
          customer: { user_id: 'u-crash' },
          settings: { approval: { mode: 'manual', deadlineMs: 60_000 } },
        },
        { waitMs: 15_000 },
      );
      sessionId = started.sessionId;
      expect(started.phase).toBe('awaiting_approval');

      // The first approve is carried out and then its connection is closed instead of answered; the
      // worker's check of that unknown outcome (transaction/state) hangs at the provider.
      const faults = await sandbox.plain('POST', '/sandbox/faults', {
        rules: [
          { kind: 'drop_after_commit', path: 'transaction/approve', times: 1 },
          { kind: 'latency', ms: STATE_LATENCY_MS, path: 'transaction/state' },
        ],
      });
      expect(faults.status).toBe(200);

      // The Update waits until the decision has been carried out: through worker A's death and B's retry.
      approving = payments.sessions.approve(sessionId, { waitMs: 140_000 }).then(
        (view) => ({ view }),
        (error: unknown) => ({ error }),
      );

      // Worker A's approve was committed and its connection dropped; A now asks transaction/state what
      // happened, and that question hangs: kill A before it hears the answer.
      const dropped = await waitFor(
        'the approve to be committed and dropped',
        () => (approveCalls[0]?.closedAtMs !== undefined ? approveCalls[0] : undefined),
        30_000,
        10,
      );
      await waitFor(
        "worker A's transaction/state check after the drop",
        () => (stateCalls.some((c) => c.atMs >= dropped.closedAtMs!) ? true : undefined),
        10_000,
        10,
      );
      workerA.child.kill('SIGKILL');
      const killedAt = Date.now();
      expect(await workerA.exited).toEqual({ code: null, signal: 'SIGKILL' });
      await sandbox.plain('DELETE', '/sandbox/faults');
      // A never got an answer to the approve, nor to its check.
      expect(approveCalls).toHaveLength(1);
      expect(dropped.status).toBeUndefined();
      expect(
        stateCalls.filter((c) => c.atMs >= dropped.closedAtMs!).every((c) => c.status === undefined),
      ).toBe(true);
      // ... but the provider took the approve: the money moves with no worker alive.
      const moved = await waitFor(
        'the hold and the capture of the approve',
        async () => {
          const entries = (await sandbox.ledger(sessionId)).entries;
          return entries.some((e) => e.kind === 'capture') ? entries : undefined;
        },
        15_000,
        100,
      );
      expect(moved.map((e) => [e.kind, e.amount])).toEqual([
        ['hold', AMOUNT],
        ['capture', AMOUNT],
      ]);
      expect(approveCalls).toHaveLength(1);

      // Worker B on the same task queue. The attempt A held times out (startToCloseTimeout 45 s) and
      // is retried here.
      workerB = spawnWorkerProcess(sandbox, taskQueue, store.env);
      await workerB.polling();
      const result = await within(
        finalView(temporal.client, sessionId),
        90_000,
        `session ${sessionId} ends after worker B started`,
      );
      expect(result.phase).toBe('succeeded');

      // The retry, after the crash, looked at the provider's state first (answered) and, seeing the
      // approve done, sent no second approve at all.
      expect(stateCalls.some((c) => c.atMs > killedAt && c.status === 200)).toBe(true);
      expect(approveCalls).toHaveLength(1);
      expect(approveCalls[0]!.key).toBeDefined();

      // Nothing moved twice.
      expect((await sandbox.ledger(sessionId)).entries.map((e) => [e.kind, e.amount])).toEqual([
        ['hold', AMOUNT],
        ['capture', AMOUNT],
      ]);

      const approved = await within(approving, 30_000, 'the approve Update completes');
      expect('view' in approved ? approved.view.phase : String(approved.error)).toMatch(
        /^(processing|succeeded)$/,
      );

      expect(workerA.output().includes(PAN)).toBe(false); // not toContain: a failure would print it
      expect(workerB.output().includes(PAN)).toBe(false);
    } finally {
      await stop(workerA);
      await stop(workerB);
      await sandbox.plain('DELETE', '/sandbox/faults');
      if (approving && sessionId) {
        // A session left running (the test failed) would keep the Update's client polling after
        // afterAll has closed the connection.
        const handle = temporal.client.workflow.getHandle(sessionId);
        if ((await handle.describe()).status.name === 'RUNNING') await handle.terminate('test over');
        await within(approving, 10_000, 'the approve Update ends').catch(() => undefined);
      }
    }
  }, 150_000);
});
