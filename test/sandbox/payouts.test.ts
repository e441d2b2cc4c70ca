import { startTestSandbox, type TestSandbox } from '../helpers/sandbox';
import { sandboxWithSink } from '../helpers/sandbox-with-sink';
import { eventTypes, transferApproved, waitForEvent } from './flow';
import { cardPayout, fpsAccount, isFinal, RUB, user } from './fixtures';
import { TEST_CARD } from '../../sandbox/test-cards';

describe('sandbox: payouts', () => {
  const fx = sandboxWithSink({});

  async function tokenize(card: string, allowTokenization: boolean) {
    const pt = await fx.sb.post('public_token', {
      card_tokenize: { allow_tokenization: allowTokenization, lang: 'ru' },
    });
    expect(pt.body.public_token).toMatch(/^pt_/);
    const widget = await fx.sb.plain('POST', '/sandbox/widgets/card-tokenize', {
      public_token: pt.body.public_token,
      card_number: card,
      card_exp_month: '01',
      card_exp_year: '2031',
      name_on_card: 'IVAN IVANOV',
    });
    expect(widget.body.status).toBe('ok');
    expect(widget.text).not.toContain(card);
    return widget.body;
  }

  it('to a raw card: approve_pending, approve, checkout_results, ledger payout', async () => {
    const id = await transferApproved(fx.sb, {
      payout_info: cardPayout(TEST_CARD.mastercard),
      sum_info: RUB(12000),
      participant_info: { payee_info: { full_name: 'Ivan Ivanov' } },
    });
    const results = await fx.sink.waitFor(
      (h) => h.body?.type === 'checkout_results' && h.body.session_info.id === id,
    );
    const payout = results.body.session_info.payouts[0];
    expect(payout).toMatchObject({
      transaction_status: 'successful',
      payout_info: { type: 'card_info', card_info: { card_last4: '4444', card_network: 'mastercard' } },
    });
    expect(payout.id).toMatch(/^po_\d+$/);
    expect(results.body.session_info.transaction_status).toBe('completed');
    expect((await fx.sb.ledger(id)).entries.map((e) => [e.kind, e.amount])).toEqual([['payout', 12000]]);
    expect(await eventTypes(fx.sb, id)).toEqual(['approve_pending', 'checkout_results']);
  });

  it('several payouts in one session: each its own decision and result; the ledger pays the one that succeeded', async () => {
    const init = await fx.sb.post('transaction/initiate', {
      sum_info: RUB(1000),
      participant_info: { payee_info: { full_name: 'Ivan Ivanov' } },
    });
    const id = init.body.session_info.id as string;
    const transfer = (sum: number, reference?: string) =>
      fx.sb.post(
        'transaction/start/transfer',
        {
          session_id: id,
          payout_info: cardPayout(),
          sum_info: RUB(sum),
          ...(reference ? { user_info: user(reference) } : {}),
        },
        { idempotencyKey: `several-${id}-${sum}` },
      );
    const approvals = async (n: number) => {
      for (const deadline = Date.now() + 10_000; Date.now() < deadline;) {
        const events = await eventTypes(fx.sb, id);
        if (events.filter((e) => e === 'approve_pending').length >= n) return;
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error(`no approve_pending #${n}`);
    };
    // 1: canceled by the partner.
    expect((await transfer(100)).body.status).toBe('ok');
    await approvals(1);
    // Another payout waits until this one is decided: approve and cancel name only the session.
    const early = await transfer(150);
    expect(early.body.error.error_description).toBe('session_id.decision_pending');
    await fx.sb.post('transaction/cancel', { session_id: id });
    // 2: fails at the provider (test behaviour: loser).
    expect((await transfer(200, 'loser')).body.status).toBe('ok');
    await approvals(2);
    await fx.sb.post('transaction/approve', { session_id: id });
    await fx.sb.waitForSession(id, (st) => st.payouts?.[1]?.transaction_status === 'unsuccessful');
    // 3: succeeds.
    expect((await transfer(300)).body.status).toBe('ok');
    await approvals(3);
    await fx.sb.post('transaction/approve', { session_id: id });
    const done = await fx.sb.waitForSession(id, (st) => st.payouts?.length === 3 && isFinal(st));
    expect(
      done.payouts.map((p: { transaction_status: string; sum_info: { sum: number } }) => [
        p.transaction_status,
        p.sum_info.sum,
      ]),
    ).toEqual([
      ['unsuccessful', 100],
      ['unsuccessful', 200],
      ['successful', 300],
    ]);
    expect(done.transaction_status).toBe('completed');
    expect((await fx.sb.ledger(id)).entries.map((e) => [e.kind, e.amount])).toEqual([['payout', 300]]);
    // A checkout_results for each payout; a payment cannot join a session of payouts.
    expect((await eventTypes(fx.sb, id)).filter((e) => e === 'checkout_results')).toHaveLength(3);
    const payment = await fx.sb.post('transaction/start/checkout', {
      session_id: id,
      payment_info: { type: 'fps_info' },
    });
    expect(payment.body.error.error_description).toBe('session_id.already_started');
  });

  it('canceling a payout after approve_pending pays nothing', async () => {
    const res = await fx.sb.post('transaction/init/transfer', {
      payout_info: cardPayout(),
      sum_info: RUB(100),
    });
    const id = res.body.session_info.id;
    await waitForEvent(fx.sb, id, 'approve_pending');
    const canceled = await fx.sb.post('transaction/cancel', { session_id: id });
    expect(canceled.body.session_info.payouts[0].transaction_status).toBe('unsuccessful');
    expect((await fx.sb.ledger(id)).entries).toEqual([]);
  });

  it('to hashed card details from the tokenization widget (public_token card_tokenize)', async () => {
    const widget = await tokenize(TEST_CARD.mir, false);
    expect(widget.card_token).toBeUndefined();
    expect(widget.hashed_card_details.hashed_card_number).toMatch(/^hcn_/);
    const init = await fx.sb.post('transaction/initiate', {});
    const started = await fx.sb.post('transaction/start/transfer', {
      session_id: init.body.session_info.id,
      payout_info: {
        type: 'card_info',
        card_info: { type: 'hashed_card_details', hashed_card_details: widget.hashed_card_details },
      },
      sum_info: RUB(700),
    });
    expect(started.body.session_info.payouts[0].payout_info.card_info).toMatchObject({
      type: 'hashed_card_details',
      card_last4: '0004',
      card_network: 'mir',
    });
    const id = init.body.session_info.id;
    await waitForEvent(fx.sb, id, 'approve_pending');
    await fx.sb.post('transaction/approve', { session_id: id });
    expect((await fx.sb.waitForSession(id, isFinal)).payouts[0].transaction_status).toBe('successful');
    // Token inquiry of the hashed card.
    const info = await fx.sb.post('public_token/state', {
      type: 'card_info',
      card_info: {
        type: 'hashed_card_details',
        hashed_card_details: { hashed_card_number: widget.hashed_card_details.hashed_card_number },
      },
    });
    expect(info.body.token_info).toEqual({
      type: 'card_info',
      hashed_card_number: widget.hashed_card_details.hashed_card_number,
      card_network: 'mir',
      card_last4: '0004',
    });
  });

  it('to a tokenized card (allow_tokenization)', async () => {
    const widget = await tokenize(TEST_CARD.visa, true);
    expect(widget.card_token).toMatch(/^ct_/);
    const id = await transferApproved(fx.sb, {
      payout_info: {
        type: 'card_info',
        card_info: { type: 'tokenized_card', tokenized_card: { token: widget.card_token } },
      },
      sum_info: RUB(300),
    });
    expect((await fx.sb.waitForSession(id, isFinal)).payouts[0].payout_info.card_info.card_last4).toBe(
      '1111',
    );
    const unknown = await fx.sb.post('transaction/init/transfer', {
      payout_info: {
        type: 'card_info',
        card_info: { type: 'tokenized_card', tokenized_card: { token: 'ct_nope' } },
      },
      sum_info: RUB(300),
    });
    expect(unknown.body.error).toEqual({
      error_code: 'repository_record_not_found',
      error_description: 'payout_info.card_info.tokenized_card.token',
    });
  });

  it('the tokenization token serves one operation', async () => {
    const pt = await fx.sb.post('public_token', { card_tokenize: { allow_tokenization: false } });
    const first = await fx.sb.plain('POST', '/sandbox/widgets/card-tokenize', {
      public_token: pt.body.public_token,
      card_number: TEST_CARD.visa,
    });
    expect(first.body.status).toBe('ok');
    const second = await fx.sb.plain('POST', '/sandbox/widgets/card-tokenize', {
      public_token: pt.body.public_token,
      card_number: TEST_CARD.visa,
    });
    expect(second.body.error).toEqual({
      error_code: 'invalid_request',
      error_description: 'public_token.already_used',
    });
  });

  it('to an FPS account with a bank of sbp/banks', async () => {
    const banks = (await fx.sb.get('sbp/banks')).body.banks;
    const id = await transferApproved(fx.sb, {
      payout_info: fpsAccount('+79990001122', banks[1].id),
      sum_info: RUB(4000),
    });
    const final = await fx.sb.waitForSession(id, isFinal);
    expect(final.payouts[0]).toMatchObject({
      transaction_status: 'successful',
      payout_info: { type: 'account_info' },
    });
    expect(final.payouts[0].transaction_info.fps_transaction_id).toBeDefined();
    const badBank = await fx.sb.post('transaction/init/transfer', {
      payout_info: fpsAccount('+79990001122', '999'),
      sum_info: RUB(4000),
    });
    expect(badBank.body.error.error_description).toBe(
      'payout_info.account_info.fps_info_verification.bank_identifier.invalid_value',
    );
    const unregistered = await transferApproved(fx.sb, {
      payout_info: fpsAccount('+79990000000'),
      sum_info: RUB(4000),
    });
    expect((await fx.sb.waitForSession(unregistered, isFinal)).payouts[0].error.error_code).toBe(
      'recipient_not_registered',
    );
  });
});

describe('sandbox: identity check (rule 5)', () => {
  let sb: TestSandbox;
  beforeAll(async () => {
    sb = await startTestSandbox({ config: { registeredFpsPhones: ['+79991112233'] } });
  });
  afterAll(() => sb.close());

  const check = (phone: string) =>
    sb.post('sbp/identity_check', {
      payout_info: fpsAccount(phone),
      participant_info: { payee_info: { given_name: 'Ivan', family_name: 'Ivanov' } },
    });

  it('a registered recipient completes: no approve_pending, no charge', async () => {
    const res = await check('+79991112233');
    expect(res.body.session_info.payouts[0].transaction_status).toBe('ongoing');
    const id = res.body.session_info.id;
    const final = await sb.waitForSession(id, isFinal);
    expect(final.transaction_status).toBe('completed');
    expect(final.payouts[0]).toMatchObject({ transaction_status: 'successful', sum_info: RUB(0) });
    expect(await eventTypes(sb, id)).toEqual(['checkout_results']);
    expect((await sb.ledger(id)).entries).toEqual([]);
    const approve = await sb.post('transaction/approve', { session_id: id });
    expect(approve.body.error.error_description).toBe('session_id.not_awaiting_approval');
  });

  it('any other recipient is canceled', async () => {
    const id = (await check('+79995556677')).body.session_info.id;
    const final = await sb.waitForSession(id, isFinal);
    expect(final).toMatchObject({
      transaction_status: 'canceled',
      error: { error_code: 'session_cancelled' },
    });
    expect(final.payouts[0].error.error_code).toBe('recipient_not_registered');
    expect(await eventTypes(sb, id)).toEqual(['checkout_results']);
  });

  it('is refused without payee_info', async () => {
    const res = await sb.post('sbp/identity_check', { payout_info: fpsAccount(), participant_info: {} });
    expect(res.body.error).toEqual({
      error_code: 'invalid_request',
      error_description: 'participant_info.payee_info.not_null',
    });
  });
});
