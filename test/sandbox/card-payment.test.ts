import { verify } from 'node:crypto';
import { sandboxWithSink } from '../helpers/sandbox-with-sink';
import { CARDS, cardPayment, isFinal, RUB, user } from './fixtures';

describe('sandbox: card payment', () => {
  const fx = sandboxWithSink({});

  it('initiate -> start/checkout -> approve_pending -> approve -> checkout_results, signed webhooks', async () => {
    const init = await fx.sb.post('transaction/initiate', { sum_info: RUB(10000), user_info: user() });
    expect(init.status).toBe(200);
    expect(init.body.status).toBe('ok');
    const sessionId: string = init.body.session_info.id;
    expect(sessionId).toMatch(/^ps_\d+$/);
    expect(init.body.session_info.transaction_status).toBe('created');
    expect(init.body.session_info.created_date).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);

    const start = await fx.sb.post('transaction/start/checkout', {
      session_id: sessionId,
      payment_info: cardPayment(),
    });
    expect(start.status).toBe(200);
    const payment = start.body.session_info.payments[0];
    expect(payment.id).toMatch(/^pm_\d+$/);
    expect(payment.transaction_status).toBe('pending');
    expect(payment.payment_info).toEqual({
      type: 'card_info',
      card_info: {
        type: 'card_details',
        card_last4: '1111',
        card_bin: '411111',
        card_network: 'visa',
        country_code_alpha3: 'USA',
      },
    });
    expect(start.text).not.toContain(CARDS.frictionless);
    expect(start.text).not.toContain('"123"');

    const pending = await fx.sink.waitFor(
      (h) => h.body?.type === 'approve_pending' && h.body.session_info.id === sessionId,
    );
    expect(pending.body.session_info.next_step).toBe('approve');
    expect(pending.body.session_info.payments[0].transaction_status).toBe('pending');
    const signature = String(pending.headers['x-signature']);
    expect(
      verify('sha256', pending.rawBody, fx.sb.keys.service.publicKey, Buffer.from(signature, 'base64')),
    ).toBe(true);

    const approved = await fx.sb.post('transaction/approve', { session_id: sessionId });
    expect(approved.body.status).toBe('ok');
    expect(approved.body.session_info.actions.approve).toBeDefined();

    const results = await fx.sink.waitFor(
      (h) => h.body?.type === 'checkout_results' && h.body.session_info.id === sessionId,
    );
    expect(results.body.session_info.transaction_status).toBe('completed');
    expect(results.body.session_info.payments[0].transaction_status).toBe('successful');
    expect(results.body.session_info.payments[0].completed_date).toBeDefined();

    const state = await fx.sb.waitForSession(sessionId, isFinal);
    expect(state.payments[0].transaction_status).toBe('successful');
    const ledger = await fx.sb.ledger(sessionId);
    expect(ledger.entries.map((e) => [e.kind, e.amount])).toEqual([
      ['hold', 10000],
      ['capture', 10000],
    ]);
  });
});
