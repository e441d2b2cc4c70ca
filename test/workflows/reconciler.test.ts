/**
 * The provider is the truth and webhooks can be lost or off: the reconciler re-reads finished money
 * sessions page by page and brings every change made behind paysaga's back into its session (a running
 * one by signal, a closed one by a new run), counting and reporting what it found.
 */
import { reconcilerQuery, type ReconcilerState } from '../../common/reconciler';
import type { SessionView } from '../../common/views';
import { finalView } from '../helpers/final';
import { startStack, type TestStack } from '../helpers/stack';
import { card, FRICTIONLESS, references, rub } from '../helpers/workflow-test';

const ref = references('recon');

jest.setTimeout(120_000);

describe('reconciler', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ webhooks: false, settings: { followMs: 1_000 } });
  });
  afterAll(async () => {
    await stack?.close();
  });

  async function paid(amount: number): Promise<SessionView> {
    const started = await stack.payments.sessions.startCardCheckout({
      reference: ref('pay'),
      amount: rub(amount),
      card: card(FRICTIONLESS),
      customer: { user_id: 'u-rec' },
    });
    return finalView(stack.temporal, started.sessionId);
  }

  async function closed(sessionId: string): Promise<void> {
    const deadline = Date.now() + 30_000;
    while ((await stack.temporal.workflow.getHandle(sessionId).describe()).status.name === 'RUNNING') {
      if (Date.now() > deadline) throw new Error(`${sessionId} still running`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  it('finds a chargeback and a refund made behind paysaga, pages through every session, and reports them', async () => {
    // Five finished sessions (more than one page of two); their workflows close after one second.
    const sessions = [
      await paid(5_000),
      await paid(4_000),
      await paid(3_000),
      await paid(2_000),
      await paid(1_000),
    ];
    // A payout moves money too: it is re-read like the payments.
    const payout = await stack.payments.sessions.startPayout({
      reference: ref('payout'),
      amount: rub(900),
      destination: { type: 'card', card: card(FRICTIONLESS) },
    });
    const paidOut = await finalView(stack.temporal, payout.sessionId);
    expect(paidOut.phase).toBe('succeeded');
    for (const s of [...sessions, paidOut]) await closed(s.sessionId);
    const [charged, refunded] = sessions;

    // Behind paysaga's back: a chargeback with no webhook, and a refund made by another system.
    await stack.sandbox.plain('POST', '/sandbox/chargebacks', {
      session_id: charged!.sessionId,
      sum_info: { sum: 1_200, currency_code: 'rub' },
    });
    await stack.provider.refund(
      { session_id: refunded!.sessionId, sum_info: { sum: 700, currency_code: 'rub' } },
      { idempotencyKey: `elsewhere-${refunded!.sessionId}` },
    );

    const id = await stack.payments.startReconciler({ everyMs: 60_000, windowMs: 3_600_000, pageSize: 2 });
    const handle = stack.temporal.workflow.getHandle(id);
    let state: ReconcilerState = await handle.query(reconcilerQuery);
    const deadline = Date.now() + 60_000;
    while (!state.lastPass) {
      if (Date.now() > deadline) throw new Error(`no pass finished: ${JSON.stringify(state)}`);
      await new Promise((r) => setTimeout(r, 250));
      state = await handle.query(reconcilerQuery);
    }
    await handle.terminate('test over');

    // One pass over more than one page: every money session of this stack (its own task queue) checked,
    // the payout included, the two repaired.
    expect(state.lastPass.checked).toBe(sessions.length + 1);
    expect(state.lastPass.repaired).toBeGreaterThanOrEqual(2);
    expect(state.lastPass.failed).toBe(0);
    const found = new Set(state.recent.filter((r) => r.outcome === 'repaired').map((r) => r.sessionId));
    expect(found.has(charged!.sessionId)).toBe(true);
    expect(found.has(refunded!.sessionId)).toBe(true);

    // Each session records the change as an operation; its result stays what it was.
    const cb = await stack.payments.sessions.get(charged!.sessionId);
    expect(cb).toMatchObject({ phase: 'succeeded', final: true });
    expect(cb.totals).toMatchObject({ captured: 5_000, chargedBack: 1_200 });
    const rf = await stack.payments.sessions.get(refunded!.sessionId);
    expect(rf.totals).toMatchObject({ captured: 4_000, refunded: 700 });
    expect(rf.events.map((e) => e.type)).toContain('refunded');
  });
});
