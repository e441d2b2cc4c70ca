/**
 * A release, as docs/operations.md ("Releasing a new build") describes it, on a real Temporal server (the
 * dev server) with the sandbox and real workers: build A runs sessions of several kinds and a
 * subscription; build B, whose checkout would not replay A's histories, is started and made current.
 * A's sessions finish on A with the provider's truth; new sessions run on B; the subscription moves to
 * B between two periods; nothing is charged twice; once A runs nothing more, its workers stop.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomUUID } from 'node:crypto';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import type { Client } from '@temporalio/client';
import { workflowBundleOptions } from '../../workers/workflow-bundle-options';
import { buildIdOf, deploymentStatus, makeCurrent, type WorkerVersion } from '../../workers/versioning';
import { finalView } from '../helpers/final';
import { completeThreeDs, payFpsQr } from '../helpers/payer';
import { startStack, type TestStack } from '../helpers/stack';
import { sharedWorkflowBundlePath } from '../helpers/temporal';
import { until } from '../helpers/until';
import { card, FRICTIONLESS, references, rub, THREE_DS } from '../helpers/workflow-test';
import { TEST_CARD } from '../../sandbox/test-cards';

jest.setTimeout(10 * 60_000);
const ref = references('release');

/** The build a workflow's latest run is pinned to. */
async function buildOf(client: Client, workflowId: string): Promise<string | undefined> {
  const d = await client.workflow.getHandle(workflowId).describe();
  return d.raw.workflowExecutionInfo?.versioningInfo?.deploymentVersion?.buildId ?? undefined;
}

describe('a release: build A drains while build B takes new work', () => {
  const deploymentName = `release-${randomUUID().slice(0, 8)}`;
  let a: WorkerVersion;
  let b: WorkerVersion;
  let bundleB: string;
  let stack: TestStack;
  let stopB: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    const { code } = await bundleWorkflowCode({
      ...workflowBundleOptions(),
      workflowsPath: require.resolve('../fixtures/build-b'),
      logger: new DefaultLogger('WARN'),
    });
    bundleB = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'paysaga-build-b-')), 'workflow-bundle.js');
    fs.writeFileSync(bundleB, code);
    a = { deploymentName, buildId: buildIdOf(fs.readFileSync(sharedWorkflowBundlePath())) };
    b = { deploymentName, buildId: buildIdOf(code) };
    expect(b.buildId).not.toBe(a.buildId);
    stack = await startStack({
      webhooks: true,
      settings: { followMs: 1_000, approval: { mode: 'manual', deadlineMs: 5 * 60_000 } },
      // A's payers act only after the release: their QR and 3-D Secure page outlive a slow machine's wait
      // (the sandbox's clock runs a hundred times faster than the real one).
      sandbox: { qrTtlSeconds: 30_000, config: { threeDsTtlSeconds: 30_000 } },
      build: { bundlePath: sharedWorkflowBundlePath(), version: a },
    });
    await makeCurrent(stack.temporal, a);
  });
  afterAll(async () => {
    await stopB?.();
    await stack?.close();
  });

  it('sessions begun on A end on A, new ones run on B, the subscription moves at a period boundary', async () => {
    const { temporal, payments } = stack;
    const auto = { approval: { mode: 'auto' as const } };

    // A recurring token for the subscription, paid on A.
    const first = await payments.sessions.startCardCheckout({
      reference: ref('token'),
      amount: rub(100),
      card: card(FRICTIONLESS),
      customer: { user_id: 'subscriber' },
      allowRecurring: true,
      settings: auto,
    });
    const token = (await finalView(temporal, first.sessionId)).recurringToken!;

    // On A: sessions that wait for someone, and a subscription billing every four seconds.
    const threeDs = await payments.sessions.startCardCheckout(
      {
        reference: ref('3ds'),
        amount: rub(2_000),
        card: card(THREE_DS),
        customer: { user_id: 'u' },
        settings: auto,
      },
      { waitMs: 15_000 },
    );
    const manual = await payments.sessions.startCardCheckout(
      { reference: ref('manual'), amount: rub(3_000), card: card(FRICTIONLESS), customer: { user_id: 'u' } },
      { waitMs: 15_000 },
    );
    const fps = await payments.sessions.startFpsPayment(
      { reference: ref('fps'), amount: rub(2_500), customer: { user_id: 'u' }, settings: auto },
      { waitMs: 15_000 },
    );
    const payout = await payments.sessions.startPayout(
      {
        reference: ref('payout'),
        amount: rub(1_200),
        destination: { type: 'card', card: card(TEST_CARD.mastercard) },
      },
      { waitMs: 15_000 },
    );
    const subscription = await payments.subscriptions.start({
      reference: ref('sub'),
      token,
      amount: rub(300),
      schedule: { interval: 'second', count: 4 },
      customer: { user_id: 'subscriber' },
      settings: auto,
    });
    expect([threeDs.phase, manual.phase, fps.phase, payout.phase]).toEqual([
      'awaiting_payer',
      'awaiting_approval',
      'awaiting_payer',
      'awaiting_approval',
    ]);
    const onA = [threeDs.sessionId, manual.sessionId, fps.sessionId, payout.sessionId];
    for (const id of [...onA, subscription.subscriptionId])
      expect(await buildOf(temporal, id)).toBe(a.buildId);
    await until(
      'a period paid on A',
      () => payments.subscriptions.get(subscription.subscriptionId),
      (s) => s.totals.succeeded >= 1,
      60_000,
      250,
    );

    // The release: B's workers start, then B becomes current.
    stopB = await stack.addWorker({ bundlePath: bundleB, version: b });
    await makeCurrent(temporal, b);

    // New work runs on B (its checkout begins with its timer).
    const onB = await paidOnB('new', 1_500);
    const historyB = (await temporal.workflow.getHandle(onB.sessionId).fetchHistory()).events ?? [];
    expect(
      historyB.some((e) => e.timerStartedEventAttributes?.startToFireTimeout?.seconds?.toString() === '1'),
    ).toBe(true);

    // A's sessions are finished by their payers and the partner: on A, with the provider's truth.
    await completeThreeDs(threeDs.userAction, '12345');
    await payments.sessions.notifyPayerReturned(threeDs.sessionId);
    await payments.sessions.approve(manual.sessionId);
    expect(await payFpsQr(stack.sandbox.url, fps.operations[0]!.id)).toBe(200);
    await payments.sessions.approve(payout.sessionId);
    for (const id of onA) {
      expect({ id, phase: (await finalView(temporal, id)).phase }).toEqual({ id, phase: 'succeeded' });
      expect(await buildOf(temporal, id)).toBe(a.buildId);
      const truth = (await stack.provider.state({ session_id: id })).session_info;
      expect(truth.transaction_status).toBe('completed');
      const moves = (await stack.sandbox.ledger(id)).entries.map((e) => `${e.kind}:${e.operationId}`);
      expect(moves).toEqual([...new Set(moves)]);
    }

    // The subscription moves to B at its next period boundary, and goes on billing there.
    await until(
      'the subscription on build B',
      () => buildOf(temporal, subscription.subscriptionId),
      (build) => build === b.buildId,
      60_000,
      250,
    );
    const paidBefore = (await payments.subscriptions.get(subscription.subscriptionId)).totals.succeeded;
    await until(
      'a period paid on B',
      () => payments.subscriptions.get(subscription.subscriptionId),
      (s) => s.totals.succeeded > paidBefore,
      60_000,
      250,
    );
    await payments.subscriptions.cancel(subscription.subscriptionId);

    // Every period charged once: one charge session per period, each paid once in the ledger.
    const view = await payments.subscriptions.get(subscription.subscriptionId);
    const paid = view.charges.filter((c) => c.outcome === 'succeeded');
    expect(new Set(paid.map((c) => c.period)).size).toBe(paid.length);
    for (const c of paid) {
      const moves = (await stack.sandbox.ledger(c.sessionId)).entries.map(
        (e) => `${e.kind}:${e.operationId}`,
      );
      expect(moves).toEqual([...new Set(moves)]);
      expect(moves.length).toBeGreaterThan(0);
    }

    // A drains: nothing of A runs any more, so its workers stop; B goes on alone.
    await until(
      'build A drained',
      async () => (await deploymentStatus(temporal, deploymentName)).find((x) => x.buildId === a.buildId),
      (status) => status?.open === 0,
      120_000,
      500,
    );
    await stack.stopWorker();
    await paidOnB('after', 900);
  });

  /** A frictionless checkout, paid: on build B. */
  async function paidOnB(name: string, amount: number): Promise<{ sessionId: string }> {
    const started = await stack.payments.sessions.startCardCheckout({
      reference: ref(name),
      amount: rub(amount),
      card: card(FRICTIONLESS),
      customer: { user_id: 'u' },
      settings: { approval: { mode: 'auto' } },
    });
    expect((await finalView(stack.temporal, started.sessionId)).phase).toBe('succeeded');
    expect(await buildOf(stack.temporal, started.sessionId)).toBe(b.buildId);
    return started;
  }
});
