/**
 * Without webhooks nothing tells a closed session about a chargeback; the reconciler reads recently
 * closed sessions from the provider again and records what changed as a late event.
 */
import { PaymentKind } from '../../common/search-attributes';
import { reconcilerQuery } from '../../common/messages';
import { startStack, type TestStack } from '../helpers/stack';
import { card, FRICTIONLESS, references, rub } from '../helpers/workflow-test';
import { finalView } from '../helpers/final';

const ref = references();

describe('reconciler (webhooks off)', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ webhooks: false });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('a chargeback after the workflow closed is recorded by the reconciler', async () => {
    const started = await stack.payments.sessions.startCardCheckout({
      reference: ref('reconcile'),
      amount: rub(5_000),
      card: card(FRICTIONLESS),
      customer: { user_id: 'u-rec' },
    });
    const result = await finalView(stack.temporal, started.sessionId);
    expect(result.phase).toBe('succeeded');

    const cb = await stack.sandbox.plain('POST', '/sandbox/chargebacks', { session_id: started.sessionId });
    expect(cb.status).toBe(200);

    // A closed session the provider does not know: refused, counted, and the round goes on.
    const stranger = `ps_unknown_${Date.now()}`;
    const strangerRun = await stack.temporal.workflow.start('lateEventWorkflow', {
      workflowId: stranger,
      taskQueue: stack.taskQueue,
      args: [{ sessionId: stranger }, stack.settings],
      typedSearchAttributes: [{ key: PaymentKind, value: 'late_event' }],
    });
    await strangerRun.terminate('closed for the test');

    const reconciler = await stack.payments.startReconciler({
      everyMs: 300,
      windowMs: 120_000,
      maxPerRound: 100,
    });
    try {
      // Both may take a few rounds: each round sees only what Temporal visibility lists by then (the
      // closed checkout, the terminated stranger), which lags behind the closes.
      const query = () => stack.temporal.workflow.getHandle(reconciler).query(reconcilerQuery);
      const deadline = Date.now() + 30_000;
      let view = await stack.payments.sessions.get(started.sessionId);
      // A run that has not finished its first workflow task yet may not answer a query: ask again.
      let state = await query().catch(() => undefined);
      while (
        !(view.operations.some((o) => o.kind === 'chargeback') && state && state.failed >= 1) &&
        Date.now() < deadline
      ) {
        await new Promise((r) => setTimeout(r, 200));
        view = await stack.payments.sessions.get(started.sessionId);
        state = (await query().catch(() => undefined)) ?? state;
      }
      if (!state) throw new Error('the reconciler never answered its query');
      expect(view.kind).toBe('late_event');
      expect(view.operations.find((o) => o.kind === 'chargeback')).toMatchObject({
        status: 'repaid',
        amount: 5_000,
      });
      expect(state.lateEvents).toBeGreaterThanOrEqual(1);
      expect(state.failed).toBeGreaterThanOrEqual(1);
      // The next rounds find nothing new: the late-event run already knows the chargeback.
      const rounds = state.rounds;
      const roundsDeadline = Date.now() + 30_000;
      while ((await query()).rounds < rounds + 2) {
        if (Date.now() > roundsDeadline) throw new Error('the reconciler stopped going round');
        await new Promise((r) => setTimeout(r, 200));
      }
      expect((await query()).lateEvents).toBe(state.lateEvents);
    } finally {
      await stack.temporal.workflow.getHandle(reconciler).terminate('test over');
    }
  }, 90_000);
});
