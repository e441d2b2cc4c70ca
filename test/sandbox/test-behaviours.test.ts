import { sandboxWithSink } from '../helpers/sandbox-with-sink';
import { checkoutApproved, eventTypes, transferApproved, waitForEvent } from './flow';
import { cardPayment, cardPayout, fpsPayment, isFinal, RUB, user } from './fixtures';

describe('sandbox: test behaviours and project settings', () => {
  const fx = sandboxWithSink({
    projects: [
      { id: 'plain' },
      { id: 'hold', hold: true },
      { id: 'auto', autoApprove: true },
      { id: 'quiet', webhooks: false },
    ],
  });

  const pay = (reference: string) => ({
    payment_info: cardPayment(),
    sum_info: RUB(4200),
    user_info: user(reference),
  });

  it('by default operations succeed', async () => {
    const id = await checkoutApproved(fx.sb, pay('order-1'), { projectId: 'plain' });
    expect((await fx.sb.waitForSession(id, isFinal, { projectId: 'plain' })).transaction_status).toBe(
      'completed',
    );
  });

  it('thief: the payment is canceled at the hold stage (nothing is held)', async () => {
    const id = await checkoutApproved(fx.sb, pay('thief'), { projectId: 'plain' });
    const final = await fx.sb.waitForSession(id, isFinal, { projectId: 'plain' });
    expect(final.transaction_status).toBe('canceled');
    expect(final.payments[0]).toMatchObject({
      transaction_status: 'unsuccessful',
      error: { error_code: 'fraud_suspected' },
    });
    expect((await fx.sb.ledger(id)).entries).toEqual([]);
  });

  it('thief on a hold project: no finalization_pending', async () => {
    const id = await checkoutApproved(fx.sb, pay('thief'), { projectId: 'hold' });
    await fx.sb.waitForSession(id, isFinal, { projectId: 'hold' });
    expect(await eventTypes(fx.sb, id)).toEqual(['approve_pending', 'checkout_results']);
  });

  it('thief on an FPS payment: canceled before any QR is shown', async () => {
    const id = await checkoutApproved(
      fx.sb,
      { payment_info: fpsPayment(), sum_info: RUB(100), user_info: user('thief') },
      { projectId: 'plain' },
    );
    await fx.sb.waitForSession(id, isFinal, { projectId: 'plain' });
    expect(await eventTypes(fx.sb, id)).toEqual(['approve_pending', 'checkout_results']);
  });

  it('loser: the payment is canceled at the charge of the held funds (held, then released)', async () => {
    const id = await checkoutApproved(fx.sb, pay('loser'), { projectId: 'plain' });
    const final = await fx.sb.waitForSession(id, isFinal, { projectId: 'plain' });
    expect(final.payments[0]).toMatchObject({
      transaction_status: 'unsuccessful',
      error: { error_code: 'insufficient_funds' },
    });
    expect((await fx.sb.ledger(id)).entries.map((e) => [e.kind, e.amount])).toEqual([
      ['hold', 4200],
      ['release', 4200],
    ]);
  });

  it('loser on a hold project: finalization_pending arrives, the finalize then fails', async () => {
    const id = await checkoutApproved(fx.sb, pay('loser'), { projectId: 'hold' });
    await waitForEvent(fx.sb, id, 'finalization_pending');
    expect(
      (await fx.sb.post('transaction/finalize', { session_id: id }, { projectId: 'hold' })).body.status,
    ).toBe('ok');
    const final = await fx.sb.waitForSession(id, isFinal, { projectId: 'hold' });
    expect(final.transaction_status).toBe('canceled');
    expect((await fx.sb.ledger(id)).entries.map((e) => e.kind)).toEqual(['hold', 'release']);
  });

  it('loser: a payout ends with an error', async () => {
    const id = await transferApproved(
      fx.sb,
      { payout_info: cardPayout(), sum_info: RUB(900), user_info: user('loser') },
      { projectId: 'plain' },
    );
    const final = await fx.sb.waitForSession(id, isFinal, { projectId: 'plain' });
    expect(final.transaction_status).toBe('canceled');
    expect(final.payouts[0]).toMatchObject({
      transaction_status: 'unsuccessful',
      error: { error_code: 'payout_declined' },
    });
    expect((await fx.sb.ledger(id)).entries).toEqual([]);
  });

  it('thief does not affect payouts ("payments only")', async () => {
    const id = await transferApproved(
      fx.sb,
      { payout_info: cardPayout(), sum_info: RUB(900), user_info: user('thief') },
      { projectId: 'plain' },
    );
    expect(
      (await fx.sb.waitForSession(id, isFinal, { projectId: 'plain' })).payouts[0].transaction_status,
    ).toBe('successful');
  });

  it('autoApprove: no approve_pending, approve is refused, the payment goes through', async () => {
    const res = await fx.sb.post('transaction/init/checkout', pay('order-2'), { projectId: 'auto' });
    const id = res.body.session_info.id;
    const final = await fx.sb.waitForSession(id, isFinal, { projectId: 'auto' });
    expect(final.transaction_status).toBe('completed');
    expect(await eventTypes(fx.sb, id)).toEqual(['checkout_results']);
    expect(fx.sink.ofSession(id).map((h) => h.body.type)).toEqual(['checkout_results']);
    const approve = await fx.sb.post('transaction/approve', { session_id: id }, { projectId: 'auto' });
    expect(approve.body.error.error_description).toBe('session_id.not_awaiting_approval');
  });

  it('webhooks: false sends nothing; the partner polls transaction/state', async () => {
    const res = await fx.sb.post('transaction/init/checkout', pay('order-3'), { projectId: 'quiet' });
    const id = res.body.session_info.id;
    await waitForEvent(fx.sb, id, 'approve_pending');
    await fx.sb.post('transaction/approve', { session_id: id }, { projectId: 'quiet' });
    await fx.sb.waitForSession(id, isFinal, { projectId: 'quiet' });
    await new Promise((r) => setTimeout(r, 100));
    expect(fx.sink.ofSession(id)).toEqual([]);
    const events = (await fx.sb.plain('GET', `/sandbox/events?session_id=${id}`)).body.events;
    expect(events.map((e: { sent: boolean }) => e.sent)).toEqual([false, false]);
  });

  it('webhooks show the currency in upper case, responses in lower case', async () => {
    const id = await checkoutApproved(fx.sb, pay('order-4'), { projectId: 'plain' });
    const hook = await fx.sink.waitFor(
      (h) => h.body?.type === 'checkout_results' && h.body.session_info.id === id,
    );
    expect(hook.body.session_info.payments[0].sum_info).toEqual({ sum: 4200, currency_code: 'RUB' });
    expect((await fx.sb.waitForSession(id, isFinal, { projectId: 'plain' })).payments[0].sum_info).toEqual(
      RUB(4200),
    );
  });
});
