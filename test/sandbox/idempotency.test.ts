import { startTestSandbox, type TestSandbox } from '../helpers/sandbox';
import { waitForEvent } from './flow';
import { cardPayment, cardPayout, isFinal, RUB, user } from './fixtures';

describe('sandbox: idempotency (X-PARTNER-IDEMPOTENCY-KEY)', () => {
  let sb: TestSandbox;
  beforeAll(async () => {
    sb = await startTestSandbox({ projects: [{ id: 'a', hold: true }, { id: 'b' }] });
  });
  afterAll(() => sb.close());

  const A = { projectId: 'a' };

  it('same key + same request: the stored answer, no second operation', async () => {
    const body = { payout_info: cardPayout(), sum_info: RUB(5000) };
    const first = await sb.post('transaction/init/transfer', body, { ...A, idempotencyKey: 'payout-0001' });
    const before = await sb.stats();
    // Re-serialized with another key order: still the same request.
    const reordered = JSON.stringify({
      sum_info: { currency_code: 'rub', sum: 5000 },
      payout_info: body.payout_info,
    });
    const second = await sb.post('transaction/init/transfer', undefined, {
      ...A,
      idempotencyKey: 'payout-0001',
      raw: reordered,
    });
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect((await sb.stats()).stats.sessions).toBe(before.stats.sessions);
  });

  it('replays even after the session moved on; approve twice with one key moves money once', async () => {
    const res = await sb.post(
      'transaction/init/checkout',
      { payment_info: cardPayment(), sum_info: RUB(700), user_info: user() },
      A,
    );
    const id = res.body.session_info.id;
    await waitForEvent(sb, id, 'approve_pending');
    const a1 = await sb.post(
      'transaction/approve',
      { session_id: id },
      { ...A, idempotencyKey: `approve-${id}` },
    );
    await waitForEvent(sb, id, 'finalization_pending');
    const a2 = await sb.post(
      'transaction/approve',
      { session_id: id },
      { ...A, idempotencyKey: `approve-${id}` },
    );
    expect(a2.body).toEqual(a1.body);
    const f1 = await sb.post(
      'transaction/finalize',
      { session_id: id },
      { ...A, idempotencyKey: `finalize-${id}` },
    );
    const f2 = await sb.post(
      'transaction/finalize',
      { session_id: id },
      { ...A, idempotencyKey: `finalize-${id}` },
    );
    expect(f2.body).toEqual(f1.body);
    await sb.waitForSession(id, isFinal, A);
    const r1 = await sb.post(
      'transaction/refund',
      { session_id: id },
      { ...A, idempotencyKey: `refund-${id}` },
    );
    const r2 = await sb.post(
      'transaction/refund',
      { session_id: id },
      { ...A, idempotencyKey: `refund-${id}` },
    );
    expect(r2.body).toEqual(r1.body);
    await waitForEvent(sb, id, 'checkout_refunded');
    expect((await sb.ledger(id)).entries.map((e) => e.kind)).toEqual(['hold', 'capture', 'refund']);
  });

  it('same key, other session or other parameters: idempotency_key_params_mismatch', async () => {
    const s1 = (await sb.post('transaction/initiate', {}, A)).body.session_info.id;
    const s2 = (await sb.post('transaction/initiate', {}, A)).body.session_info.id;
    const ok = await sb.post(
      'transaction/start/transfer',
      { session_id: s1, payout_info: cardPayout(), sum_info: RUB(100) },
      { ...A, idempotencyKey: 'start-xyz' },
    );
    expect(ok.body.status).toBe('ok');
    const other = await sb.post(
      'transaction/start/transfer',
      { session_id: s2, payout_info: cardPayout(), sum_info: RUB(100) },
      { ...A, idempotencyKey: 'start-xyz' },
    );
    expect(other.status).toBe(409);
    expect(other.body.error.error_code).toBe('idempotency_key_params_mismatch');
    const params = await sb.post(
      'transaction/start/transfer',
      { session_id: s1, payout_info: cardPayout(), sum_info: RUB(101) },
      { ...A, idempotencyKey: 'start-xyz' },
    );
    expect(params.body.error.error_code).toBe('idempotency_key_params_mismatch');
    const endpoint = await sb.post(
      'transaction/cancel',
      { session_id: s1 },
      { ...A, idempotencyKey: 'start-xyz' },
    );
    expect(endpoint.body.error.error_code).toBe('idempotency_key_params_mismatch');
    // s2 untouched
    expect(
      (await sb.post('transaction/state', { session_id: s2 }, A)).body.session_info.transaction_status,
    ).toBe('created');
  });

  it('keys are scoped per project', async () => {
    const a = await sb.post(
      'transaction/initiate',
      { sum_info: RUB(1) },
      { projectId: 'a', idempotencyKey: 'shared-key' },
    );
    const b = await sb.post(
      'transaction/initiate',
      { sum_info: RUB(1) },
      { projectId: 'b', idempotencyKey: 'shared-key' },
    );
    expect(b.body.status).toBe('ok');
    expect(b.body.session_info.id).not.toBe(a.body.session_info.id);
  });

  it('an error answer does not consume the key', async () => {
    const res = await sb.post(
      'transaction/initiate',
      { sum_info: RUB(100), user_info: user() },
      { projectId: 'b' },
    );
    const id = res.body.session_info.id;
    // Nothing started yet: cancel is refused...
    const tooEarly = await sb.post(
      'transaction/cancel',
      { session_id: id },
      { projectId: 'b', idempotencyKey: `cancel-${id}` },
    );
    expect(tooEarly.body.error.error_description).toBe('session_id.not_cancellable');
    await sb.post(
      'transaction/start/checkout',
      { session_id: id, payment_info: cardPayment() },
      { projectId: 'b' },
    );
    await waitForEvent(sb, id, 'approve_pending');
    // ...and the same key works once cancel is allowed.
    const later = await sb.post(
      'transaction/cancel',
      { session_id: id },
      { projectId: 'b', idempotencyKey: `cancel-${id}` },
    );
    expect(later.body.session_info.transaction_status).toBe('canceled');
  });

  it.each([
    'public_token',
    'recurring_token/disable',
    'transaction/state',
    'public_token/state',
    'sbp/banks',
    'sbp/identity_check',
  ])('%s does not support a key: idempotency_key_not_supported', async (path) => {
    const res =
      path === 'sbp/banks'
        ? await sb.get(path, { idempotencyKey: 'abcd' })
        : await sb.post(path, {}, { idempotencyKey: 'abcd' });
    expect(res.status).toBe(400);
    expect(res.body.error.error_code).toBe('idempotency_key_not_supported');
  });

  it.each([
    ['abc', 'X-PARTNER-IDEMPOTENCY-KEY.min_4'],
    ['k'.repeat(65), 'X-PARTNER-IDEMPOTENCY-KEY.max_64'],
  ])('key %s is refused as invalid_request', async (key, description) => {
    const res = await sb.post('transaction/initiate', {}, { idempotencyKey: key });
    expect(res.body.error).toEqual({ error_code: 'invalid_request', error_description: description });
    expect((await sb.post('transaction/initiate', {}, { idempotencyKey: 'k'.repeat(64) })).body.status).toBe(
      'ok',
    );
    expect((await sb.post('transaction/initiate', {}, { idempotencyKey: 'kkkk' })).body.status).toBe('ok');
  });
});

describe('sandbox: idempotency while the first request is processed', () => {
  let sb: TestSandbox;
  beforeAll(async () => {
    // Each mutating request takes 2 s of real time: the second request, sent 200 ms after the first (a
    // head start that keeps the first one first), still arrives while the first is being processed.
    sb = await startTestSandbox({ config: { processingMs: 2_000 } });
  });
  afterAll(() => sb.close());

  it('same key meanwhile: idempotency_key_already_exists; afterwards the stored answer', async () => {
    const body = { payout_info: cardPayout(), sum_info: RUB(100) };
    const [first, second] = await Promise.all([
      sb.post('transaction/init/transfer', body, { idempotencyKey: 'concurrent-1' }),
      new Promise((r) => setTimeout(r, 200)).then(() =>
        sb.post('transaction/init/transfer', body, { idempotencyKey: 'concurrent-1' }),
      ),
    ]);
    expect(first.body.status).toBe('ok');
    expect(second.status).toBe(409);
    expect(second.body.error.error_code).toBe('idempotency_key_already_exists');
    const third = await sb.post('transaction/init/transfer', body, { idempotencyKey: 'concurrent-1' });
    expect(third.body).toEqual(first.body);
    expect((await sb.stats()).stats.payouts).toBe(1);
  });
});

describe('sandbox: idempotency key lifetime of 24 h × timeScale', () => {
  let sb: TestSandbox;
  beforeAll(async () => {
    // keys live 24 h × 0.00001 = 864 ms
    sb = await startTestSandbox({ timeScale: 0.00001 });
  });
  afterAll(() => sb.close());

  it('after it the key is forgotten: the same request is a new operation', async () => {
    const first = await sb.post(
      'transaction/initiate',
      { sum_info: RUB(1) },
      { idempotencyKey: 'lifetime-1' },
    );
    await new Promise((r) => setTimeout(r, 1000));
    const again = await sb.post(
      'transaction/initiate',
      { sum_info: RUB(1) },
      { idempotencyKey: 'lifetime-1' },
    );
    expect(again.body.status).toBe('ok');
    expect(again.body.session_info.id).not.toBe(first.body.session_info.id);
  });
});

describe('sandbox: idempotencyTtlSeconds sets the key lifetime (before scaling)', () => {
  let sb: TestSandbox;
  beforeAll(async () => {
    // keys live 200 s × 0.01 = 2 s; the rest of the service keeps its usual pace
    sb = await startTestSandbox({ timeScale: 0.01, config: { idempotencyTtlSeconds: 200 } });
  });
  afterAll(() => sb.close());

  it('the key answers the same session while it lives, and is forgotten after', async () => {
    const body = { sum_info: RUB(1) };
    const first = await sb.post('transaction/initiate', body, { idempotencyKey: 'short-ttl-1' });
    const replay = await sb.post('transaction/initiate', body, { idempotencyKey: 'short-ttl-1' });
    expect(replay.body.session_info.id).toBe(first.body.session_info.id);
    expect((await sb.stats()).stats.idempotencyKeys).toBe(1);
    // Waits for the expiry itself (live keys are counted without the expired ones), bounded.
    for (let i = 0; ((await sb.stats()).stats.idempotencyKeys ?? 0) > 0; i++) {
      if (i > 100) throw new Error('the key never expired');
      await new Promise((r) => setTimeout(r, 100));
    }
    const again = await sb.post('transaction/initiate', body, { idempotencyKey: 'short-ttl-1' });
    expect(again.body.session_info.id).not.toBe(first.body.session_info.id);
  });
});
