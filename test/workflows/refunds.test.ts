/**
 * Refunds of a successful payment (one refund workflow at a time under the session's id) and
 * chargebacks after the session closed, with webhooks on and off.
 */
import { PaymentStatus } from '../../common/search-attributes';
import type { SessionView as SessionResult } from '../../common/views';
import { CardDetails } from '../../provider';
import { InputValidationError } from '../../client/errors';
import { syncSessionFromProvider } from '../../client/webhook-router';
import { startStack, type TestStack } from '../helpers/stack';
import { finalView } from '../helpers/final';

const card = (pan: string) =>
  new CardDetails({ card_number: pan, card_exp_month: '12', card_exp_year: '30', card_code: '123' });
const rub = (amount: number) => ({ amount, currency: 'RUB' });
let n = 0;
const ref = (p: string) => `${p}-${Date.now()}-${++n}`;

describe.each([true, false])('refunds and chargebacks (webhooks %s)', (webhooks) => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ webhooks });
  });
  afterAll(async () => {
    await stack?.close();
  });

  const handle = (sessionId: string) => stack.temporal.workflow.getHandle(sessionId);
  const finished = (sessionId: string): Promise<SessionResult> => finalView(stack.temporal, sessionId);

  async function paid(amount: number): Promise<string> {
    const started = await stack.payments.sessions.startCardCheckout({
      reference: ref('pay'),
      amount: rub(amount),
      card: card('4111111111111111'),
      customer: { user_id: 'u1' },
    });
    expect((await finished(started.sessionId)).phase).toBe('succeeded');
    return started.sessionId;
  }

  async function ledger(sessionId: string): Promise<[string, number][]> {
    return (await stack.sandbox.ledger(sessionId)).entries.map((e) => [e.kind, e.amount]);
  }

  async function refund(sessionId: string, amount?: number): Promise<SessionResult> {
    const view = await stack.payments.refunds.create(sessionId, {
      reference: ref('rf'),
      ...(amount !== undefined ? { amount } : {}),
    });
    expect(view.kind).toBe('refund');
    return finished(sessionId);
  }

  it('partial refunds in sequence up to the full sum, then one more is refused and changes nothing', async () => {
    const id = await paid(10_000);
    const first = await refund(id, 3_000);
    expect(first.phase).toBe('succeeded');
    expect(first.money).toEqual({ amount: 3_000, currency: 'rub' });
    const second = await refund(id, 3_000);
    expect(second.phase).toBe('succeeded');
    const third = await refund(id, 4_000);
    expect(third.phase).toBe('succeeded');
    expect(third.operations.filter((o) => o.kind === 'refund')).toEqual([
      expect.objectContaining({ status: 'completed', amount: 3_000 }),
      expect.objectContaining({ status: 'completed', amount: 3_000 }),
      expect.objectContaining({ status: 'completed', amount: 4_000 }),
    ]);
    expect(await ledger(id)).toEqual([
      ['hold', 10_000],
      ['capture', 10_000],
      ['refund', 3_000],
      ['refund', 3_000],
      ['refund', 4_000],
    ]);

    const { runId } = await handle(id).describe();
    const stats = (await stack.sandbox.stats()).stats;
    const refused = stack.payments.refunds.create(id, { reference: ref('rf-more'), amount: 1 });
    await expect(refused).rejects.toBeInstanceOf(InputValidationError);
    await expect(refused).rejects.toThrow(/at most 0 is left to refund/);
    // No workflow started, no provider call changed anything.
    expect((await handle(id).describe()).runId).toBe(runId);
    expect((await stack.sandbox.stats()).stats).toEqual(stats);
    expect(await ledger(id)).toHaveLength(5);
  });

  it('a refund above what is left is refused before anything starts', async () => {
    const id = await paid(2_000);
    expect((await refund(id, 1_500)).phase).toBe('succeeded');
    await expect(stack.payments.refunds.create(id, { reference: ref('rf-over'), amount: 600 })).rejects.toThrow(
      /at most 500 is left to refund/,
    );
    expect(await ledger(id)).toEqual([
      ['hold', 2_000],
      ['capture', 2_000],
      ['refund', 1_500],
    ]);
  });

  it('a full refund (no amount) refunds the whole payment once', async () => {
    const id = await paid(5_000);
    const result = await refund(id);
    expect(result.phase).toBe('succeeded');
    expect(result.money).toEqual({ amount: 5_000, currency: 'rub' });
    expect(await ledger(id)).toEqual([
      ['hold', 5_000],
      ['capture', 5_000],
      ['refund', 5_000],
    ]);
    await expect(stack.payments.refunds.create(id, { reference: ref('rf-again') })).rejects.toThrow(
      /at most 0 is left/,
    );
  });

  it('two refunds at once: one starts, the other is told the session is busy; a repeat is the same refund', async () => {
    const id = await paid(3_000);
    // The winner's provider call is held for a while, so its refund run is certainly still going when
    // the other request looks (else a refund that had already finished would rightly allow another).
    const held = await stack.sandbox.plain('POST', '/sandbox/faults', {
      rules: [{ kind: 'latency', path: 'transaction/refund', ms: 4_000, times: 1 }],
    });
    expect(held.status).toBe(200);
    try {
      const refs = [ref('rf-a'), ref('rf-b')];
      const settled = await Promise.allSettled(
        refs.map((reference) => stack.payments.refunds.create(id, { reference, amount: 1_000 })),
      );
      const won = settled.findIndex((r) => r.status === 'fulfilled');
      expect(won).toBeGreaterThanOrEqual(0);
      const lost = settled[1 - won]!;
      expect(lost.status).toBe('rejected');
      expect(String((lost as PromiseRejectedResult).reason)).toMatch(/busy|still running/);
      expect((await finished(id)).phase).toBe('succeeded');
      // The fault did hold a refund call (the ledger below shows there was only one refund).
      const rules = (await stack.sandbox.plain('GET', '/sandbox/faults')).body.rules as { fired: number }[];
      expect(rules.map((r) => r.fired)).toEqual([1]);
      // The winner's request again: the same refund, nothing new.
      const again = await stack.payments.refunds.create(id, { reference: refs[won]!, amount: 1_000 });
      expect(again.reference).toBe(refs[won]);
      expect(again.phase).toBe('succeeded');
      expect(await ledger(id)).toEqual([
        ['hold', 3_000],
        ['capture', 3_000],
        ['refund', 1_000],
      ]);
    } finally {
      await stack.sandbox.plain('DELETE', '/sandbox/faults');
    }
  });

  it('a payment that did not succeed cannot be refunded', async () => {
    const started = await stack.payments.sessions.startCardCheckout({
      reference: ref('declined'),
      amount: rub(1_000),
      card: card('4000000000000002'),
      customer: { user_id: 'u1' },
    });
    expect((await finished(started.sessionId)).phase).toBe('failed');
    await expect(stack.payments.refunds.create(started.sessionId, { reference: ref('rf-none') })).rejects.toThrow(
      /no successful payment to refund/,
    );
  });

  if (webhooks) {
    it('a chargeback after completion is recorded by the late-event workflow and surfaced', async () => {
      const id = await paid(8_000);
      const closedRunId = (await handle(id).describe()).runId;
      const cb = await stack.sandbox.plain('POST', '/sandbox/chargebacks', {
        session_id: id,
        sum_info: { sum: 2_500, currency_code: 'rub' },
      });
      expect(cb.status).toBe(200);
      // The provider's checkout_refunded lands on a closed workflow: a late-event run takes it.
      const deadline = Date.now() + 15_000;
      while ((await handle(id).describe()).runId === closedRunId) {
        if (Date.now() > deadline) throw new Error('no late-event workflow started');
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(
        stack.webhooks.filter((w) => w.sessionId === id).map((w) => [w.status, w.outcome]),
      ).toContainEqual([200, 'late_event']);
      const view = await stack.payments.sessions.get(id);
      expect(view.kind).toBe('late_event');
      expect(view.operations).toContainEqual(
        expect.objectContaining({ kind: 'chargeback', status: 'repaid', amount: 2_500 }),
      );
      const described = await handle(id).describe();
      expect(described.typedSearchAttributes.get(PaymentStatus)).toBe('chargeback');
      expect(await ledger(id)).toEqual([
        ['hold', 8_000],
        ['capture', 8_000],
        ['chargeback', 2_500],
      ]);
      // The chargeback counts against what can still be refunded.
      const result = await finished(id);
      expect(result.reason).toMatch(/^chargeback: rf_\d+ 2500 rub/);
      await expect(stack.payments.refunds.create(id, { reference: ref('rf-cb'), amount: 6_000 })).rejects.toThrow(
        /at most 5500 is left/,
      );
      expect((await refund(id, 5_500)).phase).toBe('succeeded');
      expect(await ledger(id)).toEqual([
        ['hold', 8_000],
        ['capture', 8_000],
        ['chargeback', 2_500],
        ['refund', 5_500],
      ]);
    });
  } else {
    /*
     * Webhooks OFF: a chargeback after the session's workflow has closed reaches paysaga by no path.
     * The provider sends nothing, and nothing polls a closed session (polling lives in the running
     * workflow). The chargeback is in the provider's books only; paysaga's view stays "succeeded"
     * until someone asks the provider. What still holds: money never moves twice. A refund paysaga
     * computes from its stale view is refused by the provider, and the refund session ends failed
     * with the provider's reason. The remedy for such deployments is syncSessionFromProvider
     * (client/webhook-router.ts), run by the reconciler workflow (reconciler.test.ts) or before
     * acting on a closed session: it reads transaction/state and routes it like a webhook, so the
     * late-event workflow records it.
     */
    it('syncSessionFromProvider records a chargeback after the workflow closed (the remedy)', async () => {
      const id = await paid(4_000);
      const opts = { taskQueue: stack.taskQueue, settings: stack.settings };
      // Nothing new at the provider: the closed run already knows the state, nothing starts.
      expect(await syncSessionFromProvider(stack.temporal, stack.provider, id, opts)).toBe('already_known');
      await stack.sandbox.plain('POST', '/sandbox/chargebacks', {
        session_id: id,
        sum_info: { sum: 1_500, currency_code: 'rub' },
      });
      expect(await syncSessionFromProvider(stack.temporal, stack.provider, id, opts)).toBe('late_event');
      const view = await stack.payments.sessions.get(id);
      expect(view.kind).toBe('late_event');
      expect(view.operations).toContainEqual(
        expect.objectContaining({ kind: 'chargeback', status: 'repaid', amount: 1_500 }),
      );
      expect((await handle(id).describe()).typedSearchAttributes.get(PaymentStatus)).toBe('chargeback');
      expect((await finished(id)).reason).toMatch(/^chargeback: rf_\d+ 1500 rub/);
      // Synced again after the late-event run closed: already known, no new run.
      const runId = (await handle(id).describe()).runId;
      expect(await syncSessionFromProvider(stack.temporal, stack.provider, id, opts)).toBe('already_known');
      expect((await handle(id).describe()).runId).toBe(runId);
    });

    it('without the reconciler, a chargeback after the workflow closed is not seen (see reconciler.test.ts); a refund over it is refused by the provider', async () => {
      const id = await paid(8_000);
      const closedRunId = (await handle(id).describe()).runId;
      await stack.sandbox.plain('POST', '/sandbox/chargebacks', { session_id: id });
      const events = await stack.sandbox.plain('GET', `/sandbox/events?session_id=${id}`);
      expect((events.body.events as { type: string }[]).map((e) => e.type)).toContain('checkout_refunded');
      await new Promise((r) => setTimeout(r, 1_000));
      expect((await handle(id).describe()).runId).toBe(closedRunId);
      const view = await stack.payments.sessions.get(id);
      expect(view.phase).toBe('succeeded');
      expect(view.operations.some((o) => o.kind === 'chargeback')).toBe(false);

      const refused = await refund(id, 1_000);
      expect(refused.phase).toBe('failed');
      expect(refused.reason).toMatch(/provider_error: .*(fully_refunded|exceeds_refundable_amount)/);
      // After the refund workflow looked at the provider, the chargeback is visible.
      expect(refused.operations).toContainEqual(
        expect.objectContaining({ kind: 'chargeback', amount: 8_000 }),
      );
      expect(await ledger(id)).toEqual([
        ['hold', 8_000],
        ['capture', 8_000],
        ['chargeback', 8_000],
      ]);
    });
  }
});
