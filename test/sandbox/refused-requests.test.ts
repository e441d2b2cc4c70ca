import { startTestSandbox, type TestSandbox } from '../helpers/sandbox';
import { checkoutApproved, waitForEvent } from './flow';
import { cardPayment, isFinal, RUB, user } from './fixtures';

/**
 * Acceptance: an unsigned, wrongly signed or malformed request never changes state. The proof is the
 * ledger, the record counters and the id counters before and after a barrage of refused requests
 * aimed at every money-moving endpoint.
 */
describe('sandbox: refused requests change nothing', () => {
  let sb: TestSandbox;
  beforeAll(async () => {
    sb = await startTestSandbox({ projects: [{ hold: true }] });
  });
  afterAll(() => sb.close());

  it('ledger, records, idempotency keys and id counters stay as they were', async () => {
    // A session held at finalization_pending: approve / finalize / cancel / refund would all move money.
    const held = await checkoutApproved(sb, {
      payment_info: cardPayment(),
      sum_info: RUB(7000),
      user_info: user(),
    });
    await waitForEvent(sb, held, 'finalization_pending');
    const paid = await checkoutApproved(sb, {
      payment_info: cardPayment(),
      sum_info: RUB(3000),
      user_info: user(),
    });
    await waitForEvent(sb, paid, 'finalization_pending');
    await sb.post('transaction/finalize', { session_id: paid });
    await sb.waitForSession(paid, isFinal);

    const ledgerBefore = await sb.ledger();
    const statsBefore = await sb.stats();
    const wrongKey = sb.keys.service.privateKey;
    const attempts: Array<[string, unknown, Parameters<TestSandbox['post']>[2]]> = [];
    const bodies: Array<[string, unknown]> = [
      ['transaction/initiate', { sum_info: RUB(100), user_info: user() }],
      ['transaction/init/checkout', { payment_info: cardPayment(), sum_info: RUB(100), user_info: user() }],
      ['transaction/finalize', { session_id: held }],
      ['transaction/cancel', { session_id: held }],
      ['transaction/refund', { session_id: paid }],
      ['public_token', { card_tokenize: { allow_tokenization: true } }],
    ];
    for (const [path, body] of bodies) {
      attempts.push([path, body, { sign: false, idempotencyKey: `k-unsigned-${path}` }]);
      attempts.push([path, body, { key: wrongKey, idempotencyKey: `k-wrong-${path}` }]);
      attempts.push([path, body, { projectId: 'ghost', idempotencyKey: `k-ghost-${path}` }]);
      attempts.push([path, body, { raw: '{"session_id": ', idempotencyKey: `k-malformed-${path}` }]);
      attempts.push([path, body, { raw: '[1,2]' }]);
    }
    // Signed but schema-invalid: negative amounts, blank reference.
    attempts.push([
      'transaction/finalize',
      { session_id: held, sum_info: RUB(-5) },
      { idempotencyKey: 'k-neg' },
    ]);
    attempts.push([
      'transaction/refund',
      { session_id: paid, sum_info: { sum: 1.5, currency_code: 'rub' } },
      { idempotencyKey: 'k-frac' },
    ]);
    attempts.push([
      'transaction/init/checkout',
      { payment_info: cardPayment(), sum_info: RUB(100), user_info: user(' ') },
      { idempotencyKey: 'k-blank' },
    ]);

    for (const [path, body, opts] of attempts) {
      const res = await sb.post(path, body, opts);
      expect(res.body.status).toBe('error');
      expect([400, 401]).toContain(res.status);
    }

    expect(await sb.ledger()).toEqual(ledgerBefore);
    expect(await sb.stats()).toEqual(statsBefore);
    // The held session still waits for the partner, untouched.
    const s = await sb.post('transaction/state', { session_id: held });
    expect(s.body.session_info).toMatchObject({ transaction_status: 'active', next_step: 'finalize' });
    // And the next session gets the very next id.
    const next = await sb.post('transaction/initiate', { sum_info: RUB(100), user_info: user() });
    expect(next.body.session_info.id).toBe(`ps_${statsBefore.next_ids.ps}`);
  });
});
