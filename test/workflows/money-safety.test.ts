/**
 * Money moves exactly once. The sandbox's `drop_after_commit` fault carries a request out completely
 * and then closes the connection: the activity sees "outcome unknown", reconciles through
 * transaction/state (or resends with the same idempotency key), and the ledger shows one movement.
 * A worker that dies while a session waits is replaced, and the session completes with one charge.
 */
import type { SessionView as SessionResult } from '../../common/views';
import { CardDetails } from '../../provider';
import { startStack, type TestStack } from '../helpers/stack';
import { finalView } from '../helpers/final';
import { TEST_CARD } from '../../sandbox/test-cards';

const card = (pan: string) =>
  new CardDetails({ card_number: pan, card_exp_month: '12', card_exp_year: '30', card_code: '123' });
const rub = (amount: number) => ({ amount, currency: 'RUB' });
let n = 0;
const ref = (p: string) => `${p}-${Date.now()}-${++n}`;

jest.setTimeout(90_000);

function helpers(get: () => TestStack) {
  const finished = (sessionId: string): Promise<SessionResult> => finalView(get().temporal, sessionId);
  return {
    finished,
    async ledger(sessionId: string): Promise<[string, number][]> {
      return (await get().sandbox.ledger(sessionId)).entries.map((e) => [e.kind, e.amount]);
    },
    /** One drop_after_commit on `path`; returns how often it fired (read after the flow). */
    async dropOnce(path: string): Promise<() => Promise<number>> {
      const res = await get().sandbox.plain('POST', '/sandbox/faults', {
        rules: [{ kind: 'drop_after_commit', path, times: 1 }],
      });
      expect(res.status).toBe(200);
      return async () => {
        const rules = (await get().sandbox.plain('GET', '/sandbox/faults')).body.rules as { fired: number }[];
        return rules[0]?.fired ?? 0;
      };
    },
    async paid(amount: number): Promise<string> {
      const started = await get().payments.sessions.startCardCheckout({
        reference: ref('pay'),
        amount: rub(amount),
        card: card(TEST_CARD.visa),
        customer: { user_id: 'u1' },
      });
      expect((await finished(started.sessionId)).phase).toBe('succeeded');
      return started.sessionId;
    },
  };
}

describe.each([true, false])('outcome unknown, then reconciled (webhooks %s)', (webhooks) => {
  let stack: TestStack;
  const h = helpers(() => stack);
  beforeAll(async () => {
    stack = await startStack({ webhooks });
  });
  afterAll(async () => {
    await stack?.close();
  });
  afterEach(async () => {
    await stack.sandbox.plain('DELETE', '/sandbox/faults');
  });

  it('transaction/approve dropped after commit: succeeds, one hold and one capture', async () => {
    const fired = await h.dropOnce('transaction/approve');
    const started = await stack.payments.sessions.startCardCheckout({
      reference: ref('drop-approve'),
      amount: rub(4_200),
      card: card(TEST_CARD.visa),
      customer: { user_id: 'u1' },
    });
    const result = await h.finished(started.sessionId);
    expect(await fired()).toBe(1);
    expect(result.phase).toBe('succeeded');
    expect(await h.ledger(started.sessionId)).toEqual([
      ['hold', 4_200],
      ['capture', 4_200],
    ]);
  });

  it('transaction/start/transfer (payout to an FPS account, sent by the workflow) dropped after commit: one payout', async () => {
    const banks = (await stack.sandbox.get('sbp/banks')).body.banks as { id: string }[];
    const fired = await h.dropOnce('transaction/start/transfer');
    const started = await stack.payments.sessions.startPayout({
      reference: ref('drop-transfer'),
      amount: rub(2_500),
      destination: { type: 'fps_account', phone: '+79990001122', bankId: banks[1]!.id },
    });
    const result = await h.finished(started.sessionId);
    expect(await fired()).toBe(1);
    expect(result.phase).toBe('succeeded');
    expect(await h.ledger(started.sessionId)).toEqual([['payout', 2_500]]);
  });

  it('transaction/init/transfer (payout by token, sent by the starter) dropped after commit: the same request again is one payout', async () => {
    const pt = await stack.sandbox.post('public_token', { card_tokenize: { allow_tokenization: true } });
    const widget = await stack.sandbox.plain('POST', '/sandbox/widgets/card-tokenize', {
      public_token: pt.body.public_token,
      card_number: TEST_CARD.mastercard,
    });
    const fired = await h.dropOnce('transaction/init/transfer');
    const request = {
      reference: ref('drop-init-transfer'),
      amount: rub(2_600),
      destination: { type: 'tokenized_card' as const, token: widget.body.card_token },
    };
    // The answer was lost after the provider paid: a careful backend sends the same request again.
    const started = await stack.payments.sessions
      .startPayout(request)
      .catch(() => stack.payments.sessions.startPayout(request));
    const result = await h.finished(started.sessionId);
    expect(await fired()).toBe(1);
    expect(result.phase).toBe('succeeded');
    expect(await h.ledger(started.sessionId)).toEqual([['payout', 2_600]]);
    // The provider holds one session for it: the resend carried the same key.
    const payouts = (await stack.sandbox.ledger()).entries.filter((e) => e.amount === 2_600);
    expect(payouts).toHaveLength(1);
  });

  it('transaction/refund dropped after commit: the refund completes, one refund in the ledger', async () => {
    const id = await h.paid(6_000);
    const fired = await h.dropOnce('transaction/refund');
    await stack.payments.refunds.create(id, { reference: ref('drop-refund'), amount: 2_000 });
    // The session's result stays; the refund is followed to its own end.
    let result = await h.finished(id);
    const deadline = Date.now() + 30_000;
    while (result.refunds[0]?.status !== 'succeeded' && Date.now() < deadline)
      result = await stack.payments.sessions.waitForChange(id, {
        afterVersion: result.version,
        timeoutMs: 5_000,
      });
    expect(result.refunds).toEqual([expect.objectContaining({ amount: 2_000, status: 'succeeded' })]);
    expect(await fired()).toBe(1);
    expect(result.phase).toBe('succeeded');
    expect(result.operations.filter((o) => o.kind === 'refund')).toEqual([
      expect.objectContaining({ status: 'completed', amount: 2_000 }),
    ]);
    expect(await h.ledger(id)).toEqual([
      ['hold', 6_000],
      ['capture', 6_000],
      ['refund', 2_000],
    ]);
  });

  it("the starter's start/checkout (card data) dropped after commit: the caller's retry finds the same session, one charge", async () => {
    const fired = await h.dropOnce('transaction/start/checkout');
    const input = {
      reference: ref('drop-start'),
      amount: rub(1_300),
      card: card(TEST_CARD.visa),
      customer: { user_id: 'u1' },
    };
    await expect(stack.payments.sessions.startCardCheckout(input)).rejects.toThrow();
    expect(await fired()).toBe(1);
    const again = await stack.payments.sessions.startCardCheckout(input);
    const result = await h.finished(again.sessionId);
    expect(result.phase).toBe('succeeded');
    expect(await h.ledger(again.sessionId)).toEqual([
      ['hold', 1_300],
      ['capture', 1_300],
    ]);
  });
});

describe('outcome unknown on finalize (hold project)', () => {
  let stack: TestStack;
  const h = helpers(() => stack);
  beforeAll(async () => {
    stack = await startStack({ webhooks: true, hold: true });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it.each([
    ['full', { mode: 'auto' as const }, 7_000],
    ['partial', { mode: 'auto_partial' as const, amount: 5_000 }, 5_000],
  ])(
    'transaction/finalize (%s) dropped after commit: one capture of the finalized amount',
    async (_name, finalization, captured) => {
      const fired = await h.dropOnce('transaction/finalize');
      const started = await stack.payments.sessions.startCardCheckout({
        reference: ref('drop-finalize'),
        amount: rub(7_000),
        card: card(TEST_CARD.visa),
        customer: { user_id: 'u1' },
        settings: { finalization },
      });
      const result = await h.finished(started.sessionId);
      expect(await fired()).toBe(1);
      expect(result.phase).toBe('succeeded');
      const ledger = await h.ledger(started.sessionId);
      expect(ledger.filter(([k]) => k === 'hold')).toEqual([['hold', 7_000]]);
      expect(ledger.filter(([k]) => k === 'capture')).toEqual([['capture', captured]]);
      expect(ledger.filter(([k]) => k === 'release')).toEqual(
        captured < 7_000 ? [['release', 7_000 - captured]] : [],
      );
    },
  );
});

describe('the worker dies while a session waits for approval', () => {
  let stack: TestStack;
  const h = helpers(() => stack);
  beforeAll(async () => {
    stack = await startStack({ webhooks: true });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('a new worker on the same task queue carries the session on: one charge', async () => {
    const started = await stack.payments.sessions.startCardCheckout(
      {
        reference: ref('restart'),
        amount: rub(3_300),
        card: card(TEST_CARD.visa),
        customer: { user_id: 'u1' },
        settings: { approval: { mode: 'manual', deadlineMs: 60_000 } },
      },
      { waitMs: 15_000 },
    );
    expect(started.phase).toBe('awaiting_approval');
    await stack.stopWorker();
    // While no worker runs, the session is still there and its state is the provider's.
    const atProvider = await stack.provider.state({ session_id: started.sessionId });
    expect(atProvider.session_info.next_step).toBe('approve');
    await stack.startWorker();
    const approved = await stack.payments.sessions.approve(started.sessionId);
    expect(['processing', 'succeeded']).toContain(approved.phase);
    const result = await h.finished(started.sessionId);
    expect(result.phase).toBe('succeeded');
    expect(await h.ledger(started.sessionId)).toEqual([
      ['hold', 3_300],
      ['capture', 3_300],
    ]);
  });

  it('restartWorker() during a session: completes once', async () => {
    const started = await stack.payments.sessions.startCardCheckout(
      {
        reference: ref('restart-2'),
        amount: rub(1_100),
        card: card(TEST_CARD.visa),
        customer: { user_id: 'u1' },
        settings: { approval: { mode: 'manual', deadlineMs: 60_000 } },
      },
      { waitMs: 15_000 },
    );
    await stack.restartWorker();
    await stack.payments.sessions.approve(started.sessionId);
    expect((await h.finished(started.sessionId)).phase).toBe('succeeded');
    expect(await h.ledger(started.sessionId)).toEqual([
      ['hold', 1_100],
      ['capture', 1_100],
    ]);
  });
});
