import { endpoints, type EndpointName } from '../../provider/schemas/endpoints';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox';
import { eventTypes, waitForEvent } from './flow';
import { cardPayment, cardPayout, isFinal, RUB, user } from './fixtures';
import { TEST_CARD } from '../../sandbox/test-cards';

/* eslint-disable @typescript-eslint/no-explicit-any */

describe('sandbox: every endpoint, envelope and validation', () => {
  let sb: TestSandbox;
  beforeAll(async () => {
    sb = await startTestSandbox({ projects: [{ id: 'main', hold: true }, { id: 'other' }] });
  });
  afterAll(() => sb.close());

  const errorOf = (res: { body: any }) => res.body.error;

  it('answers all 15 endpoints of provider/schemas/endpoints.ts with status ok', async () => {
    const seen = new Set<EndpointName>();
    const ok = async (name: EndpointName, body: unknown) => {
      const def = endpoints[name];
      const res = def.method === 'GET' ? await sb.get(def.path) : await sb.post(def.path, body);
      expect({ name, status: res.status, body: res.body.status }).toEqual({ name, status: 200, body: 'ok' });
      seen.add(name);
      return res.body;
    };
    // A held card payment with a token: initiate, start, approve, finalize, refund, state.
    const s1 = (
      await ok('initiate', {
        sum_info: RUB(5000),
        user_info: user(),
        payment_settings: { allow_recurring: true },
      })
    ).session_info.id;
    await ok('startCheckout', { session_id: s1, payment_info: cardPayment() });
    await waitForEvent(sb, s1, 'approve_pending');
    await ok('approve', { session_id: s1 });
    await waitForEvent(sb, s1, 'finalization_pending');
    await ok('finalize', { session_id: s1 });
    const paid = await sb.waitForSession(s1, isFinal);
    await ok('refund', { session_id: s1, sum_info: RUB(1000) });
    await ok('state', { session_id: s1 });
    const token = paid.payments[0].recurring_token_info.token;
    // Canceled checkout from init/checkout.
    const s2 = (
      await ok('initCheckout', { payment_info: cardPayment(), sum_info: RUB(100), user_info: user() })
    ).session_info.id;
    await waitForEvent(sb, s2, 'approve_pending');
    await ok('cancel', { session_id: s2 });
    // Payouts.
    await ok('initTransfer', { payout_info: cardPayout(), sum_info: RUB(100) });
    const s3 = (await ok('initiate', {})).session_info.id;
    await ok('startTransfer', { session_id: s3, payout_info: cardPayout(), sum_info: RUB(100) });
    // Tokens, banks, identity check.
    const pt = (await ok('publicToken', { card_tokenize: { allow_tokenization: true } })).public_token;
    await ok('publicTokenState', { type: 'public_token', public_token: { token: pt } });
    await ok('recurringTokenDisable', { recurring_token_info: { token } });
    await ok('sbpBanks', {});
    await ok('identityCheck', {
      payout_info: {
        type: 'account_info',
        account_info: {
          payment_system: 'fps_info_verification',
          fps_info_verification: { phone_number: '+79991234567', bank_identifier: '100000000111' },
        },
      },
      participant_info: { payee_info: { full_name: 'Ivan Ivanov' } },
    });
    expect([...seen].sort()).toEqual((Object.keys(endpoints) as EndpointName[]).sort());
  });

  it('errors carry the error object both as error and error_info', async () => {
    const res = await sb.post('transaction/state', { session_id: 'ps_999999999' });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({
      status: 'error',
      error: { error_code: 'repository_record_not_found', error_description: 'session_id' },
      error_info: { error_code: 'repository_record_not_found', error_description: 'session_id' },
    });
  });

  it.each([
    ['transaction/initiate', { sum_info: RUB(0) }, 'sum_info.sum.positive'],
    [
      'transaction/initiate',
      { sum_info: { sum: 10, currency_code: 'rubles' } },
      'sum_info.currency_code.invalid_format',
    ],
    [
      'transaction/init/checkout',
      { payment_info: cardPayment(), sum_info: RUB(100), user_info: user('   ') },
      'customer.reference.not_blank',
    ],
    ['transaction/init/checkout', { payment_info: cardPayment(), sum_info: RUB(100) }, 'user_info.not_null'],
    ['transaction/state', {}, 'session_id.not_null'],
    [
      'transaction/init/checkout',
      { payment_info: { type: 'cash' }, sum_info: RUB(100), user_info: user() },
      'payment_info.type.invalid_value',
    ],
    [
      'transaction/init/transfer',
      {
        payout_info: {
          type: 'card_info',
          card_info: { type: 'card_details', card_details: { card_number: '12ab' } },
        },
        sum_info: RUB(1),
      },
      'payout_info.card_info.card_details.card_number.invalid_format',
    ],
    [
      'transaction/init/checkout',
      {
        payment_info: {
          type: 'card_info',
          card_info: { type: 'card_details', card_details: { card_number: TEST_CARD.visa } },
        },
        sum_info: RUB(100),
        user_info: user(),
      },
      'payment_info.card_info.card_details.card_exp_month.not_null',
    ],
    ['public_token', {}, 'card_tokenize.not_null'],
  ])('%s %j -> invalid_request %s', async (path, body, description) => {
    const res = await sb.post(path, body);
    expect(res.status).toBe(400);
    expect(errorOf(res)).toEqual({ error_code: 'invalid_request', error_description: description });
    expect(res.body.error_info).toEqual(res.body.error);
  });

  it('refuses malformed JSON, non-JSON content and unknown endpoints', async () => {
    const malformed = await sb.post('transaction/initiate', undefined, { raw: '{"sum_info":' });
    expect([malformed.status, errorOf(malformed)]).toEqual([
      400,
      { error_code: 'invalid_request', error_description: 'body.malformed_json' },
    ]);
    const text = await sb.post('transaction/initiate', undefined, {
      raw: '{}',
      headers: { 'content-type': 'text/plain' },
    });
    expect([text.status, errorOf(text).error_code]).toEqual([415, 'unsupported_media_type']);
    const unknown = await sb.post('transaction/teleport', {});
    expect([unknown.status, errorOf(unknown).error_code]).toEqual([404, 'endpoint_not_found']);
    const wrongMethod = await sb.get('transaction/state');
    expect([wrongMethod.status, errorOf(wrongMethod).error_code]).toEqual([404, 'endpoint_not_found']);
  });

  it('a session is visible only to its own project (repository_record_not_found otherwise)', async () => {
    const id = (await sb.post('transaction/initiate', { sum_info: RUB(100) }, { projectId: 'main' })).body
      .session_info.id;
    for (const path of [
      'transaction/state',
      'transaction/approve',
      'transaction/cancel',
      'transaction/finalize',
      'transaction/refund',
      'transaction/start/checkout',
      'transaction/start/transfer',
    ]) {
      const res = await sb.post(path, { session_id: id }, { projectId: 'other' });
      expect({ path, code: errorOf(res).error_code, d: errorOf(res).error_description }).toEqual({
        path,
        code: 'repository_record_not_found',
        d: 'session_id',
      });
    }
  });

  it('start/checkout takes what initiate gave and lets the call add to or replace it', async () => {
    const init = await sb.post(
      'transaction/initiate',
      { sum_info: RUB(2500), user_info: user(), extra_info: { order: 1 } },
      { projectId: 'other' },
    );
    const id = init.body.session_info.id;
    const missing = await sb.post('transaction/start/checkout', { session_id: id }, { projectId: 'other' });
    expect(errorOf(missing)).toEqual({
      error_code: 'invalid_request',
      error_description: 'payment_info.not_null',
    });
    const started = await sb.post(
      'transaction/start/checkout',
      { session_id: id, payment_info: cardPayment(), extra_info: { order: 2 } },
      { projectId: 'other' },
    );
    const payment = started.body.session_info.payments[0];
    expect(payment.sum_info).toEqual(RUB(2500));
    expect(payment.user_info.user_id).toBe('user-42');
    expect(payment.extra_info).toEqual({ order: 2 });
    expect(started.body.session_info.transaction_status).toBe('active');
    const again = await sb.post(
      'transaction/start/checkout',
      { session_id: id, payment_info: cardPayment() },
      { projectId: 'other' },
    );
    expect(errorOf(again)).toEqual({
      error_code: 'invalid_request',
      error_description: 'session_id.already_started',
    });
  });

  it('start/transfer takes payout_info given at initiate', async () => {
    const init = await sb.post(
      'transaction/initiate',
      { payout_info: cardPayout(), sum_info: RUB(700) },
      { projectId: 'other' },
    );
    const id = init.body.session_info.id;
    const started = await sb.post('transaction/start/transfer', { session_id: id }, { projectId: 'other' });
    expect(started.body.session_info.payouts[0]).toMatchObject({
      transaction_status: 'pending',
      sum_info: RUB(700),
      payout_info: { type: 'card_info' },
    });
    expect(started.body.session_info.payouts[0].id).toMatch(/^po_\d+$/);
    await waitForEvent(sb, id, 'approve_pending');
    expect(await eventTypes(sb, id)).toEqual(['approve_pending']);
  });
});
