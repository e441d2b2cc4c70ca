import { createWebhookVerifier, ProviderClient } from '../../provider';
import { resolveSandboxConfig, SandboxConfigError, startSandbox } from '../../sandbox';
import { sandboxWithSink } from '../helpers/sandbox-with-sink';
import { checkoutApproved, transferApproved, waitForEvent } from './flow';
import { CARDS, cardPayment, cardPayout, isFinal, RUB, user } from './fixtures';

describe('sandbox: opt-in fee_info (projects[].fees)', () => {
  const fx = sandboxWithSink({
    projects: [
      { id: 'fee', fees: { percent: 2.5, minimum: 10 } },
      { id: 'netgross', fees: { percent: 1.5, form: 'net_gross' } },
      { id: 'hold', hold: true, fees: { percent: 2, form: 'net_gross' } },
      { id: 'plain' },
    ],
  });

  const merchantFee = (sum: number, currency = 'rub') => ({
    fee: { merchant_fee: { sum, currency_code: currency } },
  });
  const netGross = (net: number, gross: number, currency = 'rub') => ({
    net: { sum: net, currency_code: currency },
    gross: { sum: gross, currency_code: currency },
  });

  async function paid(projectId: string, sum: number, pan: string = CARDS.frictionless) {
    const id = await checkoutApproved(
      fx.sb,
      { payment_info: cardPayment(pan), sum_info: RUB(sum), user_info: user() },
      { projectId },
    );
    return { id, final: await fx.sb.waitForSession(id, isFinal, { projectId }) };
  }

  it('card payment, merchant_fee form: percent rounded half up, from creation to success, minimum applies', async () => {
    const init = await fx.sb.post(
      'transaction/init/checkout',
      { payment_info: cardPayment(), sum_info: RUB(1020), user_info: user() },
      { projectId: 'fee' },
    );
    // 2.5 % of 1020 = 25.5 -> 26
    expect(init.body.session_info.payments[0].fee_info).toEqual(merchantFee(26));
    const id = init.body.session_info.id;
    await waitForEvent(fx.sb, id, 'approve_pending');
    const approved = await fx.sb.post('transaction/approve', { session_id: id }, { projectId: 'fee' });
    expect(approved.body.session_info.payments[0].fee_info).toEqual(merchantFee(26));
    const final = await fx.sb.waitForSession(id, isFinal, { projectId: 'fee' });
    expect(final.payments[0]).toMatchObject({ transaction_status: 'successful', fee_info: merchantFee(26) });
    // 2.5 % of 100 = 2.5 -> 3, below the minimum of 10
    expect((await paid('fee', 100)).final.payments[0].fee_info).toEqual(merchantFee(10));
  });

  it('card payment, net_gross form; the ProviderClient parses fee_info from transaction/state', async () => {
    const { id, final } = await paid('netgross', 10030);
    // 1.5 % of 10030 = 150.45 -> 150
    expect(final.payments[0].fee_info).toEqual(netGross(9880, 10030));
    const client = new ProviderClient({
      baseUrl: fx.sb.url,
      projectId: 'netgross',
      privateKey: fx.sb.keys.partner.privateKey,
      maxRetries: 0,
    });
    try {
      const state = await client.state({ session_id: id });
      expect(state.session_info.payments?.[0]?.fee_info).toEqual(netGross(9880, 10030));
    } finally {
      await client.close();
    }
  });

  it('payout: fee on the payout amount in responses and every webhook (upper-case currency there)', async () => {
    const id = await transferApproved(
      fx.sb,
      { payout_info: cardPayout(), sum_info: RUB(12000) },
      { projectId: 'fee' },
    );
    const final = await fx.sb.waitForSession(id, isFinal, { projectId: 'fee' });
    expect(final.payouts[0]).toMatchObject({ transaction_status: 'successful', fee_info: merchantFee(300) });
    const results = await fx.sink.waitFor(
      (h) => h.body?.type === 'checkout_results' && h.body.session_info.id === id,
    );
    const hooks = fx.sink.ofSession(id);
    expect(hooks.map((h) => h.body.type)).toEqual(['approve_pending', 'checkout_results']);
    for (const h of hooks) expect(h.body.session_info.payouts[0].fee_info).toEqual(merchantFee(300, 'RUB'));
    // The partner's webhook verifier accepts and parses it (its schema lower-cases currency codes).
    const verify = createWebhookVerifier([fx.sb.keys.service.publicPem]);
    const verified = verify(results.rawBody, results.headers['x-signature'] as string);
    expect(verified.ok && verified.event.session_info.payouts?.[0]?.fee_info).toEqual(merchantFee(300));
  });

  it('card payment webhooks carry fee_info too', async () => {
    const { id } = await paid('netgross', 2000);
    await fx.sink.waitFor((h) => h.body?.type === 'checkout_results' && h.body.session_info.id === id);
    const hooks = fx.sink.ofSession(id);
    expect(hooks.length).toBeGreaterThanOrEqual(2);
    for (const h of hooks)
      expect(h.body.session_info.payments[0].fee_info).toEqual(netGross(1970, 2000, 'RUB'));
  });

  it('partial finalize: the fee and, once charged, sum_info follow the finalized amount', async () => {
    const id = await checkoutApproved(
      fx.sb,
      { payment_info: cardPayment(), sum_info: RUB(10000), user_info: user() },
      { projectId: 'hold' },
    );
    await waitForEvent(fx.sb, id, 'finalization_pending');
    const pending = await fx.sb.post('transaction/state', { session_id: id }, { projectId: 'hold' });
    expect(pending.body.session_info.payments[0].fee_info).toEqual(netGross(9800, 10000));
    const fin = await fx.sb.post(
      'transaction/finalize',
      { session_id: id, sum_info: RUB(5000) },
      { projectId: 'hold' },
    );
    expect(fin.body.session_info.payments[0].fee_info).toEqual(netGross(4900, 5000));
    const final = await fx.sb.waitForSession(id, isFinal, { projectId: 'hold' });
    expect(final.payments[0]).toMatchObject({
      transaction_status: 'successful',
      sum_info: RUB(5000),
      fee_info: netGross(4900, 5000),
    });
    const hook = await fx.sink.waitFor(
      (h) => h.body?.type === 'checkout_results' && h.body.session_info.id === id,
    );
    expect(hook.body.session_info.payments[0].fee_info).toEqual(netGross(4900, 5000, 'RUB'));
  });

  it('unsuccessful operations show no fee_info; refunds carry none and leave the payment fee as it was', async () => {
    const declined = await paid('fee', 5000, CARDS.declined);
    expect(declined.final.payments[0].transaction_status).toBe('unsuccessful');
    expect(declined.final.payments[0]).not.toHaveProperty('fee_info');

    const { id } = await paid('fee', 4000);
    const refunded = await fx.sb.post('transaction/refund', { session_id: id }, { projectId: 'fee' });
    const payment = refunded.body.session_info.payments[0];
    expect(payment.fee_info).toEqual(merchantFee(100));
    expect(payment.moneyback).toHaveLength(1);
    expect(payment.moneyback[0]).not.toHaveProperty('fee_info');
  });

  it('absent everywhere when the project has no fees', async () => {
    const { id } = await paid('plain', 10000);
    const payout = await transferApproved(
      fx.sb,
      { payout_info: cardPayout(), sum_info: RUB(500) },
      { projectId: 'plain' },
    );
    await fx.sb.waitForSession(payout, isFinal, { projectId: 'plain' });
    for (const sessionId of [id, payout]) {
      await fx.sink.waitFor(
        (h) => h.body?.type === 'checkout_results' && h.body.session_info.id === sessionId,
      );
      const state = await fx.sb.post('transaction/state', { session_id: sessionId }, { projectId: 'plain' });
      expect(state.text).not.toContain('fee_info');
      for (const h of fx.sink.ofSession(sessionId)) expect(h.rawBody.toString()).not.toContain('fee_info');
    }
  });

  it.each([
    [
      'a percent above 100',
      { percent: 150 },
      new Error('invalid sandbox config:\n  projects.0.fees.percent: Too big: expected number to be <=100'),
    ],
    [
      'a percent with 5 decimals',
      { percent: 1.23456 },
      new Error('invalid sandbox config:\n  projects.0.fees.percent: at most 4 decimals'),
    ],
    [
      'no percent',
      { minimum: 5 },
      new Error(
        'invalid sandbox config:\n  projects.0.fees.percent: Invalid input: expected number, received undefined',
      ),
    ],
    [
      'a fractional minimum',
      { percent: 1, minimum: 1.5 },
      new Error(
        'invalid sandbox config:\n  projects.0.fees.minimum: Invalid input: expected int, received number',
      ),
    ],
    [
      'an unknown form',
      { percent: 1, form: 'gross' },
      new Error(
        'invalid sandbox config:\n  projects.0.fees.form: Invalid option: expected one of "merchant_fee"|"net_gross"',
      ),
    ],
    [
      'an unknown field',
      { percent: 1, fixed: 30 },
      new Error('invalid sandbox config:\n  projects.0.fees: Unrecognized key: "fixed"'),
    ],
  ])('refuses a config with %s, naming the field', async (_name, fees, message) => {
    const config = {
      serviceKey: fx.sb.keys.service.privatePem,
      projects: [{ id: 'bad', publicKey: fx.sb.keys.partner.publicPem, fees }],
    };
    expect(() => resolveSandboxConfig(config)).toThrow(SandboxConfigError);
    expect(() => resolveSandboxConfig(config)).toThrow(message);
    await expect(startSandbox(config as never)).rejects.toThrow(message);
  });
});
