import { startTestSandbox } from '../helpers/sandbox';
import { sandboxWithSink } from '../helpers/sandbox-with-sink';
import { checkoutApproved, eventTypes, state, waitForEvent } from './flow';
import { cardPayment, isFinal, RUB, user } from './fixtures';

describe('sandbox: holds and partner decisions (rule 3)', () => {
  const fx = sandboxWithSink({
    projects: [{ id: 'hold', hold: true }, { id: 'plain' }],
  });

  const held = async (sum = 10000) => {
    const id = await checkoutApproved(
      fx.sb,
      { payment_info: cardPayment(), sum_info: RUB(sum), user_info: user() },
      { projectId: 'hold' },
    );
    await waitForEvent(fx.sb, id, 'finalization_pending');
    return id;
  };
  const err = (res: { body: { error?: unknown } }) => res.body.error;

  it('finalization_pending when funds are frozen: payment pending, next_step finalize', async () => {
    const id = await held();
    const hook = await fx.sink.waitFor(
      (h) => h.body?.type === 'finalization_pending' && h.body.session_info.id === id,
    );
    expect(hook.body.session_info).toMatchObject({ transaction_status: 'active', next_step: 'finalize' });
    expect(hook.body.session_info.payments[0].transaction_status).toBe('pending');
    expect((await fx.sb.ledger(id)).entries.map((e) => e.kind)).toEqual(['hold']);
  });

  it('finalize in full charges the held amount', async () => {
    const id = await held(8000);
    const res = await fx.sb.post('transaction/finalize', { session_id: id }, { projectId: 'hold' });
    expect(res.body.session_info.actions.finalize).toBeDefined();
    const final = await fx.sb.waitForSession(id, isFinal, { projectId: 'hold' });
    expect(final.payments[0].transaction_status).toBe('successful');
    expect((await fx.sb.ledger(id)).entries.map((e) => [e.kind, e.amount])).toEqual([
      ['hold', 8000],
      ['capture', 8000],
    ]);
  });

  it('partial finalize charges part and releases the rest', async () => {
    const id = await held(10000);
    await fx.sb.post('transaction/finalize', { session_id: id, sum_info: RUB(6000) }, { projectId: 'hold' });
    await fx.sb.waitForSession(id, isFinal, { projectId: 'hold' });
    expect((await fx.sb.ledger(id)).entries.map((e) => [e.kind, e.amount])).toEqual([
      ['hold', 10000],
      ['capture', 6000],
      ['release', 4000],
    ]);
    expect(await eventTypes(fx.sb, id)).toEqual([
      'approve_pending',
      'finalization_pending',
      'checkout_results',
    ]);
  });

  it('finalize amount must be > 0, not above the held amount, in the payment currency', async () => {
    const id = await held(5000);
    const zero = await fx.sb.post(
      'transaction/finalize',
      { session_id: id, sum_info: RUB(0) },
      { projectId: 'hold' },
    );
    expect(err(zero)).toEqual({ error_code: 'invalid_request', error_description: 'sum_info.sum.positive' });
    const above = await fx.sb.post(
      'transaction/finalize',
      { session_id: id, sum_info: RUB(5001) },
      { projectId: 'hold' },
    );
    expect(err(above)).toEqual({
      error_code: 'invalid_request',
      error_description: 'sum_info.sum.exceeds_held_amount',
    });
    const usd = await fx.sb.post(
      'transaction/finalize',
      { session_id: id, sum_info: { sum: 10, currency_code: 'usd' } },
      { projectId: 'hold' },
    );
    expect(err(usd)).toEqual({
      error_code: 'invalid_request',
      error_description: 'sum_info.currency_code.invalid_value',
    });
    // Still waiting, untouched.
    expect((await state(fx.sb, id, 'hold')).next_step).toBe('finalize');
    expect((await fx.sb.ledger(id)).entries.length).toBe(1);
  });

  it('cancel after finalization_pending releases the held funds', async () => {
    const id = await held(3000);
    const res = await fx.sb.post('transaction/cancel', { session_id: id }, { projectId: 'hold' });
    expect(res.body.session_info.transaction_status).toBe('canceled');
    expect(res.body.session_info.error.error_code).toBe('session_cancelled');
    expect(res.body.session_info.payments[0]).toMatchObject({
      transaction_status: 'unsuccessful',
      error: { error_code: 'canceled_by_partner' },
    });
    expect((await fx.sb.ledger(id)).entries.map((e) => [e.kind, e.amount])).toEqual([
      ['hold', 3000],
      ['release', 3000],
    ]);
    await fx.sink.waitFor((h) => h.body?.type === 'checkout_results' && h.body.session_info.id === id);
  });

  it('cancel after approve_pending: nothing moves', async () => {
    const res = await fx.sb.post(
      'transaction/init/checkout',
      { payment_info: cardPayment(), sum_info: RUB(100), user_info: user() },
      { projectId: 'plain' },
    );
    const id = res.body.session_info.id;
    await waitForEvent(fx.sb, id, 'approve_pending');
    const canceled = await fx.sb.post('transaction/cancel', { session_id: id }, { projectId: 'plain' });
    expect(canceled.body.session_info).toMatchObject({
      transaction_status: 'canceled',
      error: { error_code: 'session_cancelled' },
    });
    expect((await fx.sb.ledger(id)).entries).toEqual([]);
  });

  it('approve / cancel / finalize at the wrong moment are refused with the reason', async () => {
    // Before approve_pending has been sent: a sandbox at real speed (steps of 1 s) gives the time to try.
    const slow = await startTestSandbox({ timeScale: 1 });
    try {
      const started = await slow.post('transaction/init/checkout', {
        payment_info: cardPayment(),
        sum_info: RUB(100),
        user_info: user(),
      });
      const early = await slow.post('transaction/approve', { session_id: started.body.session_info.id });
      expect(err(early)).toEqual({
        error_code: 'invalid_request',
        error_description: 'session_id.not_awaiting_approval',
      });
      const earlyCancel = await slow.post('transaction/cancel', { session_id: started.body.session_info.id });
      expect(err(earlyCancel)).toEqual({
        error_code: 'invalid_request',
        error_description: 'session_id.not_cancellable',
      });
    } finally {
      await slow.close();
    }
    const res = await fx.sb.post(
      'transaction/init/checkout',
      { payment_info: cardPayment(), sum_info: RUB(100), user_info: user() },
      { projectId: 'plain' },
    );
    const id = res.body.session_info.id;
    await waitForEvent(fx.sb, id, 'approve_pending');
    const finalizeTooEarly = await fx.sb.post(
      'transaction/finalize',
      { session_id: id },
      { projectId: 'plain' },
    );
    expect(err(finalizeTooEarly)).toEqual({
      error_code: 'invalid_request',
      error_description: 'session_id.not_awaiting_finalization',
    });
    await fx.sb.post('transaction/approve', { session_id: id }, { projectId: 'plain' });
    const twice = await fx.sb.post('transaction/approve', { session_id: id }, { projectId: 'plain' });
    expect(err(twice)).toEqual({
      error_code: 'invalid_request',
      error_description: 'session_id.not_awaiting_approval',
    });
    await fx.sb.waitForSession(id, isFinal, { projectId: 'plain' });
    const late = await fx.sb.post('transaction/cancel', { session_id: id }, { projectId: 'plain' });
    expect(err(late)).toEqual({
      error_code: 'invalid_request',
      error_description: 'session_id.not_cancellable',
    });
    // A hold project's session waiting for finalize refuses approve.
    const h = await held(100);
    const approveHeld = await fx.sb.post('transaction/approve', { session_id: h }, { projectId: 'hold' });
    expect(err(approveHeld)).toEqual({
      error_code: 'invalid_request',
      error_description: 'session_id.not_awaiting_approval',
    });
  });
});
