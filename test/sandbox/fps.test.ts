import { request } from 'undici';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox';
import { startWebhookSink, type WebhookSink } from '../helpers/webhook-sink';
import { eventTypes, state, waitForEvent } from './flow';
import { cardPayment, fpsPayment, isFinal, RUB } from './fixtures';

/* eslint-disable @typescript-eslint/no-explicit-any */

describe('sandbox: FPS payments and binding', () => {
  let sink: WebhookSink;
  let sb: TestSandbox;
  // Two projects share one sandbox; the QR lifetime is long enough for a test to pay in time.
  beforeAll(async () => {
    sink = await startWebhookSink();
    sb = await startTestSandbox({ webhookUrl: sink.url, qrTtlSeconds: 600 });
  });
  afterAll(async () => {
    await sb.close();
    await sink.close();
  });

  async function untilQr(body: Record<string, unknown>): Promise<{ id: string; qr: any; paymentId: string }> {
    const init = await sb.post('transaction/initiate', body);
    expect(init.body.status).toBe('ok');
    const id = init.body.session_info.id;
    const started = await sb.post('transaction/start/checkout', { session_id: id });
    expect(started.body.status).toBe('ok');
    await waitForEvent(sb, id, 'approve_pending');
    await sb.post('transaction/approve', { session_id: id });
    const hook = await sink.waitFor(
      (h) => h.body?.type === 'action_pending' && h.body.session_info.id === id,
    );
    const payment = hook.body.session_info.payments[0];
    return { id, qr: payment.user_action, paymentId: payment.id };
  }

  it('rule 6: start/checkout needs user_id or payer ipv4_address', async () => {
    const init = await sb.post('transaction/initiate', {
      payment_info: fpsPayment(),
      sum_info: RUB(100),
      user_info: { contact_info: [] },
    });
    const id = init.body.session_info.id;
    const refused = await sb.post('transaction/start/checkout', { session_id: id });
    expect(refused.body.error).toEqual({
      error_code: 'invalid_request',
      error_description: 'user_id.not_null',
    });
    const byIp = await sb.post('transaction/start/checkout', {
      session_id: id,
      participant_info: { payer_info: { ipv4_address: '203.0.113.7' } },
    });
    expect(byIp.body.status).toBe('ok');
  });

  it('action_pending carries the QR / deep link; the payer pays; checkout_results successful', async () => {
    const { id, qr, paymentId } = await untilQr({
      payment_info: fpsPayment('coffee'),
      sum_info: RUB(25000),
      user_info: { user_id: 'u1' },
    });
    expect(qr.type).toBe('payment_qr');
    expect(qr.payment_qr.qr_data.qr_content).toBe(`${sb.url}/sandbox/fps/${paymentId}`);
    expect(Buffer.from(qr.payment_qr.qr_data.qr_image, 'base64').toString()).toContain('<svg');
    // The deep link opens the bank app page.
    const page = await request(qr.payment_qr.qr_data.qr_content);
    expect(await page.body.text()).toContain('Pay');
    const paid = await sb.plain('POST', `/sandbox/fps/${paymentId}/pay`, { phone_number: '+79161234567' });
    expect(paid.body.status).toBe('ok');
    const results = await sink.waitFor(
      (h) => h.body?.type === 'checkout_results' && h.body.session_info.id === id,
    );
    const session = results.body.session_info;
    expect(session.transaction_status).toBe('completed');
    expect(session.payments[0].transaction_status).toBe('successful');
    expect(session.payments[0].payment_info).toEqual({
      type: 'fps_info',
      fps_info: { money_purpose: 'coffee' },
    });
    expect(session.payments[0].transaction_info.fps_transaction_id).toMatch(/^A\d{20}$/);
    expect(session.transaction_info.fps_transaction_id).toBe(
      session.payments[0].transaction_info.fps_transaction_id,
    );
    // The payer's phone comes back masked.
    expect(session.payments[0].user_info.contact_info).toContainEqual({ phone_number: '+7******4567' });
    expect(JSON.stringify(session)).not.toContain('79161234567');
    expect((await sb.ledger(id)).entries.map((e) => [e.kind, e.amount])).toEqual([['charge', 25000]]);
    expect(await eventTypes(sb, id)).toEqual(['approve_pending', 'action_pending', 'checkout_results']);
    // Paying twice is refused (an empty JSON post, as curl sends it, is fine).
    const twice = await sb.plain('POST', `/sandbox/fps/${paymentId}/pay`, '', {
      'content-type': 'application/json',
    });
    expect(twice.body.error.error_description).toBe('payment_id.not_awaiting_payment');
  });

  it('rule 7: binding without charge returns a recurring token in checkout_results', async () => {
    const noConsent = await sb.post('transaction/initiate', {
      payment_info: { type: 'faster_payment_system_binding' },
      sum_info: RUB(1),
      user_info: { user_id: 'u2' },
    });
    expect(noConsent.body.error).toEqual({
      error_code: 'invalid_request',
      error_description: 'payment_settings.allow_recurring.invalid_value',
    });
    const noSum = await sb.post('transaction/initiate', {
      payment_info: { type: 'faster_payment_system_binding' },
      payment_settings: { allow_recurring: true },
      user_info: { user_id: 'u2' },
    });
    expect(noSum.body.error.error_description).toBe('sum_info.not_null');

    const { id, paymentId } = await untilQr({
      payment_info: { type: 'faster_payment_system_binding' },
      payment_settings: { allow_recurring: true },
      sum_info: RUB(1),
      user_info: { user_id: 'u2' },
    });
    await sb.plain('POST', `/sandbox/fps/${paymentId}/pay`, {});
    const results = await sink.waitFor(
      (h) => h.body?.type === 'checkout_results' && h.body.session_info.id === id,
    );
    const payment = results.body.session_info.payments[0];
    expect(payment.transaction_status).toBe('successful');
    expect(payment.sum_info.sum).toBe(0);
    expect(payment.recurring_token_info).toMatchObject({
      token: expect.stringMatching(/^rt_/),
      token_active: true,
      type: 'recurring_token',
    });
    expect((await sb.ledger(id)).entries).toEqual([]);
    // The token pays later by MIT, charging the FPS account in one step.
    const mit = await sb.post('transaction/init/checkout', {
      payment_info: {
        type: 'recurring_token_info',
        recurring_token_info: { token: payment.recurring_token_info.token },
      },
      sum_info: RUB(999),
      user_info: { user_id: 'u2' },
    });
    const mitId = mit.body.session_info.id;
    await waitForEvent(sb, mitId, 'approve_pending');
    await sb.post('transaction/approve', { session_id: mitId });
    expect((await sb.waitForSession(mitId, isFinal)).payments[0].transaction_status).toBe('successful');
    expect((await sb.ledger(mitId)).entries.map((e) => [e.kind, e.amount])).toEqual([['charge', 999]]);
  });
});

describe('sandbox: FPS QR expiry', () => {
  let sb: TestSandbox;
  beforeAll(async () => {
    // 20 s × 0.01 = 200 ms of real time
    sb = await startTestSandbox({ qrTtlSeconds: 20 });
  });
  afterAll(() => sb.close());

  async function expired(body: Record<string, unknown>) {
    const res = await sb.post('transaction/init/checkout', body);
    const id = res.body.session_info.id;
    await waitForEvent(sb, id, 'approve_pending');
    await sb.post('transaction/approve', { session_id: id });
    await waitForEvent(sb, id, 'action_pending');
    return { id, final: await sb.waitForSession(id, isFinal) };
  }

  it('qr_expired after qrTtlSeconds × timeScale: payment unsuccessful, session canceled; paying then is refused', async () => {
    const { id, final } = await expired({
      payment_info: fpsPayment(),
      sum_info: RUB(100),
      user_info: { user_id: 'u3' },
    });
    expect(final.transaction_status).toBe('canceled');
    expect(final.error.error_code).toBe('session_cancelled');
    expect(final.payments[0]).toMatchObject({
      transaction_status: 'unsuccessful',
      error: { error_code: 'qr_expired' },
    });
    expect(final.payments[0].user_action).toBeUndefined();
    const late = await sb.plain('POST', `/sandbox/fps/${final.payments[0].id}/pay`, {});
    expect(late.status).toBe(409);
    expect(late.body.error.error_code).toBe('qr_expired');
    expect((await sb.ledger(id)).entries).toEqual([]);
  });

  it('a binding whose QR expires fails with no token', async () => {
    const { final } = await expired({
      payment_info: { type: 'faster_payment_system_binding' },
      payment_settings: { allow_recurring: true },
      sum_info: RUB(1),
      user_info: { user_id: 'u4' },
    });
    expect(final.transaction_status).toBe('canceled');
    expect(final.payments[0].recurring_token_info).toBeUndefined();
    expect(final.payments[0].error.error_code).toBe('qr_expired');
  });
});

describe('sandbox: FPS payment restarted after qr_expired', () => {
  let sb: TestSandbox;
  beforeAll(async () => {
    // 400 s × 0.01 = 4 s of real time: the first QR still expires within a test, and paying the second
    // (approve, wait for action_pending, read the state, pay) has seconds of room on a slow machine
    sb = await startTestSandbox({ qrTtlSeconds: 400 });
  });
  afterAll(() => sb.close());

  async function untilExpired(body: Record<string, unknown>): Promise<string> {
    const res = await sb.post('transaction/initiate', body);
    const id = res.body.session_info.id;
    await sb.post('transaction/start/checkout', { session_id: id, payment_info: fpsPayment('tea') });
    await waitForEvent(sb, id, 'approve_pending');
    await sb.post('transaction/approve', { session_id: id });
    const expired = await sb.waitForSession(id, isFinal, { timeoutMs: 20_000 });
    expect(expired.payments[0].error.error_code).toBe('qr_expired');
    return id;
  }

  it('start/checkout creates a new payment on the session; paying its QR succeeds, charged once', async () => {
    const id = await untilExpired({ sum_info: RUB(300), user_info: { user_id: 'u5' } });
    const restarted = await sb.post(
      'transaction/start/checkout',
      { session_id: id, payment_info: fpsPayment('tea') },
      { idempotencyKey: `restart-${id}` },
    );
    expect(restarted.body.status).toBe('ok');
    const session = restarted.body.session_info;
    expect(session.transaction_status).toBe('active');
    expect(session.error).toBeUndefined();
    expect(session.payments).toHaveLength(2);
    expect(session.payments[0]).toMatchObject({
      transaction_status: 'unsuccessful',
      error: { error_code: 'qr_expired' },
    });
    expect(session.payments[1]).toMatchObject({
      transaction_status: 'pending',
      sum_info: RUB(300),
      payment_info: { type: 'fps_info', fps_info: { money_purpose: 'tea' } },
    });
    expect(session.payments[1].id).not.toBe(session.payments[0].id);
    // The same request again (same key) is the same restart, not a third payment.
    const again = await sb.post(
      'transaction/start/checkout',
      { session_id: id, payment_info: fpsPayment('tea') },
      { idempotencyKey: `restart-${id}` },
    );
    expect(again.body.session_info.payments).toHaveLength(2);
    // An open payment cannot be restarted.
    const twice = await sb.post('transaction/start/checkout', { session_id: id });
    expect(twice.body.error.error_description).toBe('session_id.already_started');

    await waitForEvent(sb, id, 'approve_pending', 2);
    await sb.post('transaction/approve', { session_id: id });
    await waitForEvent(sb, id, 'action_pending', 2);
    const qr = (await state(sb, id)).payments[1];
    expect(qr.user_action.payment_qr.qr_data.qr_content).toContain(qr.id);
    const paid = await sb.plain('POST', `/sandbox/fps/${qr.id}/pay`, {});
    expect(paid.body.status).toBe('ok');
    const final = await sb.waitForSession(id, isFinal);
    expect(final.transaction_status).toBe('completed');
    expect(final.payments.map((p: any) => p.transaction_status)).toEqual(['unsuccessful', 'successful']);
    expect((await sb.ledger(id)).entries.map((e) => [e.kind, e.amount])).toEqual([['charge', 300]]);
  });

  it('without payment_info the restart repeats the expired payment; another kind is refused', async () => {
    const id = await untilExpired({ sum_info: RUB(400), user_info: { user_id: 'u6' } });
    const card = await sb.post('transaction/start/checkout', { session_id: id, payment_info: cardPayment() });
    expect(card.body.error.error_description).toBe('payment_info.type.invalid_value');
    const same = await sb.post('transaction/start/checkout', { session_id: id });
    expect(same.body.status).toBe('ok');
    expect(same.body.session_info.payments[1]).toMatchObject({
      transaction_status: 'pending',
      sum_info: RUB(400),
      payment_info: { type: 'fps_info', fps_info: { money_purpose: 'tea' } },
      user_info: { user_id: 'u6' },
    });
  });

  it('an FPS payment that failed otherwise (thief) is not restarted', async () => {
    const res = await sb.post('transaction/init/checkout', {
      payment_info: fpsPayment(),
      sum_info: RUB(100),
      user_info: { user_id: 'u7', customer: { reference: 'thief' } },
    });
    const id = res.body.session_info.id;
    await waitForEvent(sb, id, 'approve_pending');
    await sb.post('transaction/approve', { session_id: id });
    const final = await sb.waitForSession(id, isFinal);
    expect(final.payments[0].error.error_code).toBe('fraud_suspected');
    const refused = await sb.post('transaction/start/checkout', { session_id: id });
    expect(refused.body.error.error_description).toBe('session_id.already_started');
  });
});
