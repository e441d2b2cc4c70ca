/**
 * Drift the reconciler cannot repair: the provider contradicts a result paysaga already gave. A payment
 * form nobody used in time ended `canceled` (nothing had started at the provider, so nothing was canceled
 * there); the payer then pays through the widget after all, with webhooks off. The reconciler's pass
 * finds it and reports it as drift (not as a repair); the session keeps its final phase, records the
 * payment, needs attention, and announces `session.drift_detected` to the backend.
 */
import { EventsClient } from '../../client/events-client';
import { reconcilerQuery, type ReconcilerState } from '../../common/reconciler';
import { finalView } from '../helpers/final';
import { until } from '../helpers/until';
import { startStack, type TestStack } from '../helpers/stack';
import { FRICTIONLESS, references, rub } from '../helpers/workflow-test';

const ref = references('drift');

jest.setTimeout(120_000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('reconciler: drift', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ webhooks: false, autoApprove: true, settings: { followMs: 1_000 } });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('a canceled session the provider later shows paid: reported as drift, never rewritten, announced', async () => {
    const started = await stack.payments.sessions.startPaymentForm({
      reference: ref('form'),
      amount: rub(3_000),
      customer: { user_id: 'u-drift' },
      settings: { deadlines: { payerActionMs: 2_000 } },
    });
    const id = started.sessionId;
    const ended = await finalView(stack.temporal, id);
    expect(ended).toMatchObject({
      phase: 'canceled',
      reason: { code: 'payer_did_not_use_the_payment_form' },
    });
    expect(ended.publicToken).toEqual(expect.any(String));
    const handle = stack.temporal.workflow.getHandle(id);
    for (const deadline = Date.now() + 30_000; (await handle.describe()).status.name === 'RUNNING';) {
      if (Date.now() > deadline) throw new Error(`${id} still running`);
      await sleep(200);
    }

    // The payer uses the form after all: the provider takes the payment (no webhook tells paysaga).
    const paid = await stack.sandbox.plain('POST', '/sandbox/widgets/payment-form', {
      public_token: ended.publicToken,
      card_number: FRICTIONLESS,
      card_exp_month: '12',
      card_exp_year: '2030',
      card_code: '123',
    });
    expect([paid.status, paid.body?.status]).toEqual([200, 'ok']);
    await stack.sandbox.waitForSession(id, (s) => s.payments?.[0]?.transaction_status === 'successful');

    const rid = await stack.payments.startReconciler({ everyMs: 60_000, windowMs: 3_600_000, pageSize: 50 });
    const reconciler = stack.temporal.workflow.getHandle(rid);
    let report: ReconcilerState = await reconciler.query(reconcilerQuery);
    for (const deadline = Date.now() + 60_000; !report.lastPass;) {
      if (Date.now() > deadline) throw new Error(`no pass finished: ${JSON.stringify(report)}`);
      await sleep(250);
      report = await reconciler.query(reconcilerQuery);
    }
    await reconciler.terminate('test over');

    const finding = report.recent.find((r) => r.sessionId === id);
    expect(finding).toMatchObject({ outcome: 'drift' });
    expect(report.lastPass.drift).toBeGreaterThanOrEqual(1);
    expect(report.totals.drift).toBeGreaterThanOrEqual(1);

    // The session: still canceled (final is final), the payment recorded, attention, the event. The
    // reconciler's sync only makes the session read transaction/state
    // (docs/decisions/016-results-are-proven.md): wait for that read.
    const after = await until(
      'the drift in the session',
      () => stack.payments.sessions.get(id),
      (s) => s.attention !== undefined,
      30_000,
    );
    expect(after).toMatchObject({ phase: 'canceled', final: true });
    expect(after.attention).toMatchObject({
      code: 'drift',
      detail: 'the provider now shows succeeded, the session ended canceled',
    });
    expect(after.totals.captured).toBe(3_000);
    const events = new EventsClient({ store: stack.store });
    let types: string[] = [];
    for (const deadline = Date.now() + 30_000; !types.includes('session.drift_detected');) {
      if (Date.now() > deadline) throw new Error(`no session.drift_detected: ${types.join(', ')}`);
      await sleep(250);
      types = (await events.listEvents({ session_id: id })).events.map((e) => e.type);
    }
    // A final session that needs attention says so, then what for.
    expect(types).toEqual([
      'session.created',
      'session.canceled',
      'session.needs_attention',
      'session.drift_detected',
    ]);
  });
});
