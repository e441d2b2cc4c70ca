/**
 * Payout sessions against the real sandbox and dev server, with webhooks on and off: every kind of
 * destination, `loser`, and a manual cancel. The ledger shows exactly one `payout` per success and
 * none otherwise.
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

describe.each([true, false])('payouts (webhooks %s)', (webhooks) => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ webhooks });
  });
  afterAll(async () => {
    await stack?.close();
  });

  const finished = (sessionId: string): Promise<SessionResult> => finalView(stack.temporal, sessionId);

  async function ledgerKinds(sessionId: string): Promise<string[]> {
    return (await stack.sandbox.ledger(sessionId)).entries.map((e) => e.kind);
  }

  async function expectPaidOnce(sessionId: string, amount: number) {
    const result = await finished(sessionId);
    expect(result.phase).toBe('succeeded');
    expect(result.kind).toBe('payout');
    expect(result.operations).toEqual([
      expect.objectContaining({ kind: 'payout', status: 'successful', amount, currency: 'rub' }),
    ]);
    const ledger = await stack.sandbox.ledger(sessionId);
    expect(ledger.entries.map((e) => [e.kind, e.amount])).toEqual([['payout', amount]]);
    return result;
  }

  /** The card tokenization widget: hashed card details, and a `ct_` token when tokenization is allowed. */
  async function tokenize(pan: string, allowTokenization: boolean) {
    const pt = await stack.sandbox.post('public_token', {
      card_tokenize: { allow_tokenization: allowTokenization, lang: 'ru' },
    });
    const widget = await stack.sandbox.plain('POST', '/sandbox/widgets/card-tokenize', {
      public_token: pt.body.public_token,
      card_number: pan,
      card_exp_month: '01',
      card_exp_year: '2031',
      name_on_card: 'IVAN IVANOV',
    });
    expect(widget.body.status).toBe('ok');
    return widget.body as {
      hashed_card_details: Record<string, string>;
      card_token?: string;
    };
  }

  it('to a raw card sent by the starter (never through Temporal)', async () => {
    const started = await stack.payments.sessions.startPayout({
      reference: ref('po-card'),
      amount: rub(12_000),
      destination: { type: 'card', card: card(TEST_CARD.mastercard) },
      participant: { payee_info: { full_name: 'Ivan Ivanov' } },
    });
    expect(started.sessionId).toMatch(/^ps_/);
    const result = await expectPaidOnce(started.sessionId, 12_000);
    expect(JSON.stringify(result)).not.toContain(TEST_CARD.mastercard);
  });

  it('to hashed card details from the tokenization widget', async () => {
    const widget = await tokenize(TEST_CARD.mir, false);
    expect(widget.card_token).toBeUndefined();
    const started = await stack.payments.sessions.startPayout({
      reference: ref('po-hashed'),
      amount: rub(700),
      destination: { type: 'hashed_card', card: widget.hashed_card_details },
    });
    const result = await expectPaidOnce(started.sessionId, 700);
    expect(JSON.stringify(result)).not.toContain(widget.hashed_card_details.hashed_card_number);
  });

  /** The provider calls of a session, in order (the sandbox's request log). */
  async function calls(sessionId: string): Promise<string[]> {
    const res = await stack.sandbox.plain('GET', `/sandbox/requests?session_id=${sessionId}`);
    return (res.body.requests as { endpoint: string }[]).map((r) => r.endpoint);
  }

  it('to a tokenized card (ct_ token): the session and its payout in one init/transfer', async () => {
    const widget = await tokenize(TEST_CARD.visa, true);
    expect(widget.card_token).toMatch(/^ct_/);
    const started = await stack.payments.sessions.startPayout({
      reference: ref('po-ct'),
      amount: rub(300),
      destination: { type: 'tokenized_card', token: widget.card_token! },
    });
    await expectPaidOnce(started.sessionId, 300);
    const made = await calls(started.sessionId);
    expect(made[0]).toBe('transaction/init/transfer');
    expect(made).not.toContain('transaction/initiate');
    expect(made).not.toContain('transaction/start/transfer');
  });

  it('to a recurring token obtained by a card payment with allowRecurring', async () => {
    const paid = await stack.payments.sessions.startCardCheckout({
      reference: ref('po-rt-pay'),
      amount: rub(1_000),
      card: card(TEST_CARD.visa),
      customer: { user_id: 'u1' },
      allowRecurring: true,
    });
    const payment = await finished(paid.sessionId);
    expect(payment.phase).toBe('succeeded');
    expect(payment.recurringToken).toMatch(/^rt_/);
    const started = await stack.payments.sessions.startPayout({
      reference: ref('po-rt'),
      amount: rub(450),
      destination: { type: 'recurring_token', token: payment.recurringToken! },
    });
    await expectPaidOnce(started.sessionId, 450);
    expect(
      (await calls(started.sessionId)).filter((c) => c.includes('/init') || c.includes('/start')),
    ).toEqual(['transaction/init/transfer']);
  });

  it('to an FPS account', async () => {
    const banks = (await stack.sandbox.get('sbp/banks')).body.banks as { id: string }[];
    const started = await stack.payments.sessions.startPayout({
      reference: ref('po-fps'),
      amount: rub(4_000),
      destination: { type: 'fps_account', phone: '+79990001122', bankId: banks[1]!.id },
    });
    await expectPaidOnce(started.sessionId, 4_000);
  });

  it('to an unregistered FPS account fails with recipient_not_registered, nothing paid', async () => {
    const banks = (await stack.sandbox.get('sbp/banks')).body.banks as { id: string }[];
    const started = await stack.payments.sessions.startPayout({
      reference: ref('po-fps-unreg'),
      amount: rub(4_000),
      destination: { type: 'fps_account', phone: '+79990000000', bankId: banks[0]!.id },
    });
    const result = await finished(started.sessionId);
    expect(result.phase).toBe('failed');
    expect(result.operations[0]).toMatchObject({ status: 'unsuccessful', error: 'recipient_not_registered' });
    expect(await ledgerKinds(started.sessionId)).toEqual([]);
  });

  it('loser: the payout ends failed (payout_declined), nothing paid', async () => {
    const started = await stack.payments.sessions.startPayout({
      reference: ref('po-loser'),
      amount: rub(800),
      destination: { type: 'card', card: card(TEST_CARD.visa) },
      customer: { user_id: 'u1', customer: { reference: 'loser' } },
    });
    const result = await finished(started.sessionId);
    expect(result.phase).toBe('failed');
    expect(result.operations[0]).toMatchObject({
      kind: 'payout',
      status: 'unsuccessful',
      error: 'payout_declined',
    });
    expect(await ledgerKinds(started.sessionId)).toEqual([]);
  });

  it('manual approval: the partner cancels, nothing paid', async () => {
    const started = await stack.payments.sessions.startPayout(
      {
        reference: ref('po-cancel'),
        amount: rub(900),
        destination: { type: 'card', card: card(TEST_CARD.visa) },
        settings: { approval: { mode: 'manual', deadlineMs: 30_000 } },
      },
      { waitMs: 15_000 },
    );
    expect(started.phase).toBe('awaiting_approval');
    const canceled = await stack.payments.sessions.cancel(started.sessionId, 'payee changed their mind');
    expect(canceled.phase).toBe('canceled');
    const result = await finished(started.sessionId);
    expect(result.phase).toBe('canceled');
    expect(result.reason).toEqual({ code: 'canceled_by_partner', detail: 'payee changed their mind' });
    expect(result.operations[0]).toMatchObject({ status: 'unsuccessful', error: 'canceled_by_partner' });
    expect(await ledgerKinds(started.sessionId)).toEqual([]);
  });

  it('manual approval: the partner approves, paid once', async () => {
    const started = await stack.payments.sessions.startPayout(
      {
        reference: ref('po-approve'),
        amount: rub(650),
        destination: { type: 'card', card: card(TEST_CARD.visa) },
        settings: { approval: { mode: 'manual', deadlineMs: 30_000 } },
      },
      { waitMs: 15_000 },
    );
    expect(started.phase).toBe('awaiting_approval');
    await stack.payments.sessions.approve(started.sessionId);
    await expectPaidOnce(started.sessionId, 650);
  });
});

/*
 * A provider slower than the saga: start/transfer answers a payout that is still being prepared
 * (pending, no next_step). Approving then is refused (not_awaiting_approval); the saga must wait for
 * approve_pending. Regression: such a payout used to end failed with a provider error.
 */
describe.each([true, false])('payouts with a slow provider (webhooks %s)', (webhooks) => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ webhooks, sandbox: { timeScale: 0.3 } });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('waits for approve_pending before approving, paid once', async () => {
    const started = await stack.payments.sessions.startPayout({
      reference: ref('po-slow'),
      amount: rub(1_200),
      destination: { type: 'card', card: card(TEST_CARD.visa) },
    });
    const result = await finalView(stack.temporal, started.sessionId);
    expect(result.phase).toBe('succeeded');
    expect(result.reason).toBeUndefined();
    expect((await stack.sandbox.ledger(started.sessionId)).entries.map((e) => e.kind)).toEqual(['payout']);
  });
});
