/**
 * Refunds and chargebacks are operations of the session (docs/decisions/012-the-session-is-one-resource.md):
 * the session keeps its kind, reference and result; each refund is bounded by what is left (captured, less
 * refunds and chargebacks), carried out one at a time by the session's workflow, and the same reference is
 * the same refund. After the workflow has closed, a refund or a late provider event opens a new run that
 * carries the whole session on. With webhooks on and off.
 */
import { ProviderRefusedError, ReferenceConflictError, SessionStateError } from '../../client/errors';
import { syncSessionFromProvider } from '../../client/webhook-router';
import { storedStates } from '../../store/sessions';
import type { SessionView } from '../../common/views';
import { finalView } from '../helpers/final';
import { startStack, type TestStack } from '../helpers/stack';
import { card, FRICTIONLESS, references, rub } from '../helpers/workflow-test';
import { TEST_CARD } from '../../sandbox/test-cards';

const DECLINED = TEST_CARD.visaDeclined;
const ref = references('rf');

jest.setTimeout(120_000);

describe.each([true, false])('refunds and chargebacks (webhooks %s)', (webhooks) => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ webhooks, hold: false });
  });
  afterAll(async () => {
    await stack?.close();
  });

  const handle = (sessionId: string) => stack.temporal.workflow.getHandle(sessionId);

  async function paid(amount: number, reference = ref('pay')): Promise<SessionView> {
    const started = await stack.payments.sessions.startCardCheckout({
      reference,
      amount: rub(amount),
      card: card(FRICTIONLESS),
      customer: { user_id: 'u1' },
    });
    const view = await finalView(stack.temporal, started.sessionId);
    expect(view.phase).toBe('succeeded');
    return view;
  }

  async function ledger(sessionId: string): Promise<[string, number][]> {
    return (await stack.sandbox.ledger(sessionId)).entries.map((e) => [e.kind, e.amount]);
  }

  /** A refund, followed to its end; the session view then. */
  async function refund(sessionId: string, amount?: number, reference = ref('r')): Promise<SessionView> {
    await stack.payments.refunds.create(sessionId, {
      reference,
      ...(amount !== undefined ? { amount } : {}),
    });
    return until(sessionId, (v) => v.refunds.find((r) => r.reference === reference)?.status === 'succeeded');
  }

  async function until(
    sessionId: string,
    pred: (v: SessionView) => boolean,
    ms = 60_000,
  ): Promise<SessionView> {
    const deadline = Date.now() + ms;
    let view = await stack.payments.sessions.get(sessionId);
    while (!pred(view)) {
      if (Date.now() > deadline)
        throw new Error(`session ${sessionId} never got there: ${JSON.stringify(view)}`);
      view = await stack.payments.sessions.waitForChange(sessionId, {
        afterVersion: view.version,
        timeoutMs: Math.min(10_000, deadline - Date.now()),
      });
    }
    return view;
  }

  async function closed(sessionId: string): Promise<string> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const d = await handle(sessionId).describe();
      if (d.status.name !== 'RUNNING') return d.runId;
      if (Date.now() > deadline) throw new Error(`workflow ${sessionId} still running`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  it('partial refunds up to the whole payment; the session stays the payment, with every refund and the totals', async () => {
    const payment = await paid(10_000);
    const id = payment.sessionId;
    await refund(id, 3_000);
    await refund(id, 3_000);
    const done = await refund(id, 4_000);
    expect(done).toMatchObject({ kind: 'card_checkout', reference: payment.reference, phase: 'succeeded' });
    expect(done.refunds.map((r) => [r.amount, r.status])).toEqual([
      [3_000, 'succeeded'],
      [3_000, 'succeeded'],
      [4_000, 'succeeded'],
    ]);
    expect(done.totals).toMatchObject({ captured: 10_000, refunded: 10_000, chargedBack: 0, net: 0 });
    expect(done.events.map((e) => e.type)).toEqual(expect.arrayContaining(['created', 'final', 'refunded']));

    const stats = (await stack.sandbox.stats()).stats;
    const more = stack.payments.refunds.create(id, { reference: ref('more'), amount: 1 });
    await expect(more).rejects.toBeInstanceOf(SessionStateError);
    await expect(more).rejects.toMatchObject({ code: 'fully_refunded' });
    expect((await stack.sandbox.stats()).stats).toEqual(stats);
    expect(await ledger(id)).toEqual([
      ['hold', 10_000],
      ['capture', 10_000],
      ['refund', 3_000],
      ['refund', 3_000],
      ['refund', 4_000],
    ]);

    // The original create, repeated now: the same session, shown as the payment with its refunds.
    const again = await stack.payments.sessions.startCardCheckout({
      reference: payment.reference,
      amount: rub(10_000),
      card: card(FRICTIONLESS),
      customer: { user_id: 'u1' },
    });
    expect(again.created).toBe(false);
    expect(again).toMatchObject({ sessionId: id, kind: 'card_checkout', phase: 'succeeded' });
    expect(again.refunds).toHaveLength(3);
  });

  it('above what is left: refused naming the amount, nothing moves; without an amount: exactly what is left', async () => {
    const { sessionId: id } = await paid(2_000);
    await refund(id, 1_500);
    await expect(
      stack.payments.refunds.create(id, { reference: ref('over'), amount: 600 }),
    ).rejects.toMatchObject({
      name: 'SessionStateError',
      code: 'exceeds_refundable',
      message: 'amount: at most 500 is left to refund',
    });
    const rest = await refund(id);
    expect(rest.refunds.map((r) => r.amount)).toEqual([1_500, 500]);
    expect(await ledger(id)).toEqual([
      ['hold', 2_000],
      ['capture', 2_000],
      ['refund', 1_500],
      ['refund', 500],
    ]);
  });

  it('the same reference is the same refund; another amount under it is refused naming the reference', async () => {
    const { sessionId: id } = await paid(3_000);
    const reference = ref('same');
    const first = await stack.payments.refunds.create(id, { reference, amount: 1_000 });
    expect(first.created).toBe(true);
    const repeat = await stack.payments.refunds.create(id, { reference, amount: 1_000 });
    expect(repeat.created).toBe(false);
    const other = stack.payments.refunds.create(id, { reference, amount: 2_000 });
    await expect(other).rejects.toBeInstanceOf(ReferenceConflictError);
    await expect(other).rejects.toMatchObject({
      field: 'reference',
      rule: 'already used for a refund of 1000',
    });
    await until(id, (v) => v.refunds[0]?.status === 'succeeded');
    expect(await ledger(id)).toEqual([
      ['hold', 3_000],
      ['capture', 3_000],
      ['refund', 1_000],
    ]);
  });

  it('concurrent refunds never exceed what was captured: the workflow takes them one at a time', async () => {
    const { sessionId: id } = await paid(3_000);
    // Each refund call is held a while, so that all requests are in before the first one is done.
    await stack.sandbox.plain('POST', '/sandbox/faults', {
      rules: [{ kind: 'latency', path: 'transaction/refund', ms: 1_500, times: 3 }],
    });
    try {
      const settled = await Promise.allSettled(
        [ref('c1'), ref('c2'), ref('c3')].map((reference) =>
          stack.payments.refunds.create(id, { reference, amount: 1_500 }),
        ),
      );
      expect(settled.filter((s) => s.status === 'fulfilled')).toHaveLength(2);
      const refused = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected')!;
      // The third was validated after the first two took everything: nothing is left.
      expect(refused.reason).toMatchObject({ name: 'SessionStateError', code: 'fully_refunded' });
      const done = await until(
        id,
        (v) => v.refunds.length === 2 && v.refunds.every((r) => r.status === 'succeeded'),
      );
      expect(done.totals.refunded).toBe(3_000);
    } finally {
      await stack.sandbox.plain('DELETE', '/sandbox/faults');
    }
    expect(await ledger(id)).toEqual([
      ['hold', 3_000],
      ['capture', 3_000],
      ['refund', 1_500],
      ['refund', 1_500],
    ]);
  });

  it('after the workflow closed, a refund opens a new run that carries the whole session on', async () => {
    const payment = await paid(4_000);
    const id = payment.sessionId;
    const closedRun = await closed(id);
    const view = await refund(id, 1_000);
    expect((await handle(id).describe()).runId).not.toBe(closedRun);
    expect(view).toMatchObject({ kind: 'card_checkout', reference: payment.reference, phase: 'succeeded' });
    // Everything the first run knew is still there (the event log starts with its creation).
    expect(view.events[0]).toMatchObject({ type: 'created' });
    expect(view.totals).toMatchObject({ captured: 4_000, refunded: 1_000, net: 3_000 });
    expect(await ledger(id)).toEqual([
      ['hold', 4_000],
      ['capture', 4_000],
      ['refund', 1_000],
    ]);
  });

  it('a payment that did not succeed cannot be refunded: a state conflict, nothing sent', async () => {
    const started = await stack.payments.sessions.startCardCheckout({
      reference: ref('declined'),
      amount: rub(1_000),
      card: card(DECLINED),
      customer: { user_id: 'u1' },
    });
    expect((await finalView(stack.temporal, started.sessionId)).phase).toBe('failed');
    await expect(
      stack.payments.refunds.create(started.sessionId, { reference: ref('none') }),
    ).rejects.toMatchObject({
      name: 'SessionStateError',
      code: 'not_refundable',
    });
    expect(await ledger(started.sessionId)).toEqual([]);
  });

  it('a chargeback after the result is an operation of the session: the result stays, what is left shrinks', async () => {
    const payment = await paid(8_000);
    const id = payment.sessionId;
    await stack.sandbox.plain('POST', '/sandbox/chargebacks', {
      session_id: id,
      sum_info: { sum: 2_500, currency_code: 'rub' },
    });
    // With webhooks on the provider tells the session; with them off, the provider's state is read
    // (what the reconciler does for every finished session).
    if (!webhooks)
      expect(
        await syncSessionFromProvider(stack.temporal, stack.provider, id, {
          taskQueue: stack.taskQueue,
          stored: storedStates(stack.store),
        }),
      ).toMatch(/signaled|reopened/);
    const view = await until(id, (v) => v.totals.chargedBack === 2_500);
    expect(view).toMatchObject({
      kind: 'card_checkout',
      reference: payment.reference,
      phase: 'succeeded',
      final: true,
    });
    expect(view.operations).toContainEqual(
      expect.objectContaining({ kind: 'chargeback', status: 'repaid', amount: 2_500 }),
    );
    expect(view.events.map((e) => e.type)).toContain('chargeback');
    await expect(
      stack.payments.refunds.create(id, { reference: ref('cb-over'), amount: 6_000 }),
    ).rejects.toMatchObject({
      code: 'exceeds_refundable',
      message: 'amount: at most 5500 is left to refund',
    });
    await refund(id, 5_500);
    expect(await ledger(id)).toEqual([
      ['hold', 8_000],
      ['capture', 8_000],
      ['chargeback', 2_500],
      ['refund', 5_500],
    ]);
  });

  it('a refund the provider refuses is a typed error and the refund is recorded as failed', async () => {
    const { sessionId: id } = await paid(2_000);
    // A chargeback behind paysaga's back (no webhook reaches the session before the refund is sent).
    await stack.sandbox.plain('POST', '/sandbox/faults', {
      rules: [{ kind: 'webhook_drop', eventType: 'checkout_refunded', times: 1 }],
    });
    try {
      await stack.sandbox.plain('POST', '/sandbox/chargebacks', { session_id: id });
      const refused = stack.payments.refunds.create(id, { reference: ref('late'), amount: 1_000 });
      await expect(refused).rejects.toBeInstanceOf(ProviderRefusedError);
      await expect(refused).rejects.toMatchObject({ refusal: { endpoint: 'transaction/refund' } });
    } finally {
      await stack.sandbox.plain('DELETE', '/sandbox/faults');
    }
    const view = await stack.payments.sessions.get(id);
    expect(view.refunds).toEqual([expect.objectContaining({ amount: 1_000, status: 'failed' })]);
    expect(view.phase).toBe('succeeded');
    expect(await ledger(id)).toEqual([
      ['hold', 2_000],
      ['capture', 2_000],
      ['chargeback', 2_000],
    ]);
  });
});
