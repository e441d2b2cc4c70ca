import { sandboxWithSink } from '../helpers/sandbox-with-sink';
import { checkoutApproved, waitForEvent } from './flow';
import { cardPayment, isFinal, RUB, user } from './fixtures';

describe('sandbox: refunds (rule 4) and chargebacks', () => {
  const fx = sandboxWithSink({
    projects: [{ id: 'plain' }, { id: 'hold', hold: true }],
  });

  const paid = async (sum = 10000) => {
    const id = await checkoutApproved(
      fx.sb,
      { payment_info: cardPayment(), sum_info: RUB(sum), user_info: user() },
      { projectId: 'plain' },
    );
    await fx.sb.waitForSession(id, isFinal, { projectId: 'plain' });
    return id;
  };
  const refund = (id: string, body: Record<string, unknown> = {}) =>
    fx.sb.post('transaction/refund', { session_id: id, ...body }, { projectId: 'plain' });

  it('a full refund: moneyback ongoing, then completed with checkout_refunded', async () => {
    const id = await paid(10000);
    const res = await refund(id, { extra_info: { reason: 'return' } });
    const mb = res.body.session_info.payments[0].moneyback;
    expect(mb).toEqual([
      expect.objectContaining({
        id: expect.stringMatching(/^rf_\d+$/),
        transaction_status: 'ongoing',
        chargeback: false,
        sum_info: RUB(10000),
      }),
    ]);
    const hook = await fx.sink.waitFor(
      (h) => h.body?.type === 'checkout_refunded' && h.body.session_info.id === id,
    );
    const record = hook.body.session_info.payments[0].moneyback[0];
    expect(record).toMatchObject({
      transaction_status: 'completed',
      chargeback: false,
      completed_date: expect.any(String),
    });
    expect(hook.body.session_info.transaction_status).toBe('completed');
    expect((await fx.sb.ledger(id)).entries.map((e) => [e.kind, e.amount])).toEqual([
      ['hold', 10000],
      ['capture', 10000],
      ['refund', 10000],
    ]);
    const more = await refund(id);
    expect(more.body.error).toEqual({
      error_code: 'invalid_request',
      error_description: 'session_id.fully_refunded',
    });
  });

  it('several partial refunds, bounded by the payment (ongoing ones count)', async () => {
    const id = await paid(10000);
    expect((await refund(id, { sum_info: RUB(3000) })).body.status).toBe('ok');
    expect((await refund(id, { sum_info: RUB(3000) })).body.status).toBe('ok');
    const over = await refund(id, { sum_info: RUB(4001) });
    expect(over.body.error).toEqual({
      error_code: 'invalid_request',
      error_description: 'sum_info.sum.exceeds_refundable_amount',
    });
    const rest = await refund(id);
    expect(
      rest.body.session_info.payments[0].moneyback.map((r: { sum_info: { sum: number } }) => r.sum_info.sum),
    ).toEqual([3000, 3000, 4000]);
    await waitForEvent(fx.sb, id, 'checkout_refunded', 3);
    const refunds = (await fx.sb.ledger(id)).entries.filter((e) => e.kind === 'refund');
    expect(refunds.map((e) => e.amount)).toEqual([3000, 3000, 4000]);
    expect(new Set(refunds.map((e) => e.refundId)).size).toBe(3);
  });

  it('refunds only a successful payment, in its currency', async () => {
    const init = await fx.sb.post('transaction/initiate', { sum_info: RUB(100) }, { projectId: 'plain' });
    const none = await refund(init.body.session_info.id);
    expect(none.body.error).toEqual({
      error_code: 'invalid_request',
      error_description: 'session_id.not_refundable',
    });
    const canceled = await fx.sb.post(
      'transaction/init/checkout',
      { payment_info: cardPayment(), sum_info: RUB(100), user_info: user('thief') },
      { projectId: 'plain' },
    );
    const cid = canceled.body.session_info.id;
    await waitForEvent(fx.sb, cid, 'approve_pending');
    await fx.sb.post('transaction/approve', { session_id: cid }, { projectId: 'plain' });
    await fx.sb.waitForSession(cid, isFinal, { projectId: 'plain' });
    expect((await refund(cid)).body.error.error_description).toBe('session_id.not_refundable');
    const id = await paid(500);
    expect(
      (await refund(id, { sum_info: { sum: 100, currency_code: 'usd' } })).body.error.error_description,
    ).toBe('sum_info.currency_code.invalid_value');
    expect(
      (await fx.sb.post('transaction/refund', { session_id: 'ps_1' }, { projectId: 'plain' })).body.error
        .error_code,
    ).toBe('repository_record_not_found');
  });

  it('after a partial finalize, refunds are bounded by the captured amount', async () => {
    const id = await checkoutApproved(
      fx.sb,
      { payment_info: cardPayment(), sum_info: RUB(10000), user_info: user() },
      { projectId: 'hold' },
    );
    await waitForEvent(fx.sb, id, 'finalization_pending');
    await fx.sb.post('transaction/finalize', { session_id: id, sum_info: RUB(2500) }, { projectId: 'hold' });
    await fx.sb.waitForSession(id, isFinal, { projectId: 'hold' });
    const over = await fx.sb.post(
      'transaction/refund',
      { session_id: id, sum_info: RUB(2501) },
      { projectId: 'hold' },
    );
    expect(over.body.error.error_description).toBe('sum_info.sum.exceeds_refundable_amount');
    const full = await fx.sb.post('transaction/refund', { session_id: id }, { projectId: 'hold' });
    expect(full.body.session_info.payments[0].moneyback[0].sum_info).toEqual(RUB(2500));
  });

  it('a chargeback started by the service: moneyback chargeback true, repaid, checkout_refunded', async () => {
    const id = await paid(8000);
    const res = await fx.sb.plain('POST', '/sandbox/chargebacks', { session_id: id, sum_info: RUB(5000) });
    expect(res.body.status).toBe('ok');
    const hook = await fx.sink.waitFor(
      (h) => h.body?.type === 'checkout_refunded' && h.body.session_info.id === id,
    );
    expect(hook.body.session_info.payments[0].moneyback).toEqual([
      expect.objectContaining({
        chargeback: true,
        transaction_status: 'repaid',
        sum_info: { sum: 5000, currency_code: 'RUB' },
      }),
    ]);
    // Refunds and chargebacks share the bound.
    expect((await refund(id, { sum_info: RUB(3001) })).body.error.error_description).toBe(
      'sum_info.sum.exceeds_refundable_amount',
    );
    const second = await fx.sb.plain('POST', '/sandbox/chargebacks', { session_id: id });
    expect(second.body.session_info.payments[0].moneyback[1]).toMatchObject({
      chargeback: true,
      sum_info: RUB(3000),
    });
    const third = await fx.sb.plain('POST', '/sandbox/chargebacks', { session_id: id });
    expect(third.body.error.error_description).toBe('session_id.fully_refunded');
    expect(
      (await fx.sb.ledger(id)).entries.filter((e) => e.kind === 'chargeback').map((e) => e.amount),
    ).toEqual([5000, 3000]);
    const unknown = await fx.sb.plain('POST', '/sandbox/chargebacks', { session_id: 'ps_0' });
    expect(unknown.status).toBe(404);
  });
});
