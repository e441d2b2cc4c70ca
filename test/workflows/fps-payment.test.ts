/**
 * FPS payments: the QR / deep link is surfaced early; the payer pays in the bank app; an expired QR
 * ends the session with `qr_expired`, or is replaced by a new payment on the same session while
 * renewals are left. Each with webhooks on and off (polling only).
 */
import type { SessionView } from '../../common/views';
import { payFpsQr } from '../helpers/payer';
import { type TestStack } from '../helpers/stack';
import { fpsStacks, references, rub, sessionHelpers } from '../helpers/workflow-test';

const ref = references('fps');

describe.each([true, false])('FPS payment (webhooks %s)', (webhooks) => {
  // `stack`: QRs live 10 s (tests where the payer acts); `shortQr`: 4 s (tests of expiry).
  const fx = fpsStacks(webhooks);

  const { finished, moves, until } = sessionHelpers(() => fx.stack);
  const expiring = sessionHelpers(() => fx.shortQr);

  function start(
    name: string,
    amount: number,
    qrRenewals?: number,
    scenario?: string,
    on: TestStack = fx.stack,
  ): Promise<SessionView> {
    return on.payments.sessions.startFpsPayment(
      {
        reference: ref(name),
        amount: rub(amount),
        customer: { user_id: 'u1', ...(scenario ? { customer: { reference: scenario } } : {}) },
        moneyPurpose: 'order 42',
        ...(qrRenewals !== undefined ? { qrRenewals } : {}),
      },
      { waitMs: 15_000 },
    );
  }

  it('surfaces the QR / deep link early; the payer pays; one charge', async () => {
    const started = await start('pay', 25_000);
    expect(started.phase).toBe('awaiting_payer');
    const paymentId = started.operations[0]!.id;
    const qr = started.userAction?.payment_qr?.qr_data;
    expect(started.userAction?.type).toBe('payment_qr');
    expect(qr?.qr_content).toBe(`${fx.stack.sandbox.url}/sandbox/fps/${paymentId}`);
    expect(qr?.qr_image).toBeTruthy();
    expect(await payFpsQr(fx.stack.sandbox.url, paymentId)).toBe(200);
    const result = await finished(started.sessionId);
    expect(result.phase).toBe('succeeded');
    expect(result.reason).toBeUndefined();
    expect(result.userAction).toBeUndefined();
    expect(result.operations).toEqual([
      { id: paymentId, kind: 'payment', status: 'successful', amount: 25_000, currency: 'rub' },
    ]);
    expect(await moves(started.sessionId)).toEqual([['charge', 25_000]]);
  });

  it('thief: refused before a QR is shown', async () => {
    const started = await start('thief', 500, 1, 'thief');
    const result = await finished(started.sessionId);
    expect(result.phase).toBe('failed');
    expect(result.reason).toEqual({ code: 'provider_error', providerCode: 'fraud_suspected' });
    expect(result.events.some((e) => e.type === 'renew_payment')).toBe(false);
    expect(await moves(started.sessionId)).toEqual([]);
  });

  it('loser: the payer pays but the charge fails, nothing charged', async () => {
    const started = await start('loser', 500, undefined, 'loser');
    expect(started.phase).toBe('awaiting_payer');
    expect(await payFpsQr(fx.stack.sandbox.url, started.operations[0]!.id)).toBe(200);
    const result = await finished(started.sessionId);
    expect(result.phase).toBe('failed');
    expect(result.reason).toEqual({ code: 'provider_error', providerCode: 'insufficient_funds' });
    expect(await moves(started.sessionId)).toEqual([]);
  });

  it('QR expiry without renewals: the session ends with qr_expired, nothing charged', async () => {
    const started = await start('expire', 300, 0, undefined, fx.shortQr);
    expect(started.phase).toBe('awaiting_payer');
    const result = await expiring.finished(started.sessionId);
    expect(result.phase).toBe('failed');
    expect(result.reason).toEqual({ code: 'provider_error', providerCode: 'qr_expired' });
    expect(result.operations).toHaveLength(1);
    expect(result.operations[0]).toMatchObject({ status: 'unsuccessful', error: 'qr_expired' });
    expect(result.events.some((e) => e.type === 'renew_payment')).toBe(false);
    expect(await expiring.moves(started.sessionId)).toEqual([]);
  });

  it('QR expiry with a renewal: a new payment with a new QR is started; paying it succeeds', async () => {
    const started = await start('renew', 700, 1);
    expect(started.phase).toBe('awaiting_payer');
    const first = started.operations[0]!.id;
    // The first QR expires; the session goes on (never shown as failed) with a second payment.
    const seen = new Set<string>();
    const renewed = await until(
      started.sessionId,
      (v) => {
        seen.add(v.phase);
        return v.operations.length === 2 && v.phase === 'awaiting_payer';
      },
      40_000,
    );
    expect(seen.has('failed')).toBe(false);
    const second = renewed.operations[1]!.id;
    expect(second).not.toBe(first);
    expect(renewed.operations[0]).toMatchObject({ id: first, status: 'unsuccessful', error: 'qr_expired' });
    expect(renewed.userAction?.payment_qr?.qr_data?.qr_content).toBe(
      `${fx.stack.sandbox.url}/sandbox/fps/${second}`,
    );
    expect(renewed.events.filter((e) => e.type === 'renew_payment')).toHaveLength(1);
    // Every snapshot applied says which phase it meant: the expired QR meant "going on", not failed.
    expect(renewed.events.filter((e) => e.detail?.endsWith('-> failed'))).toEqual([]);
    expect(renewed.events.some((e) => e.detail === 'canceled/unsuccessful -> processing')).toBe(true);
    expect(await payFpsQr(fx.stack.sandbox.url, second)).toBe(200);
    const result = await finished(started.sessionId);
    expect(result.phase).toBe('succeeded');
    expect(result.reason).toBeUndefined();
    expect(result.operations.map((o) => o.status)).toEqual(['unsuccessful', 'successful']);
    expect(await moves(started.sessionId)).toEqual([['charge', 700]]);
  });

  it('QR expiry after the last renewal: the session ends with qr_expired', async () => {
    const started = await start('renew-out', 800, 1, undefined, fx.shortQr);
    const result = await expiring.finished(started.sessionId);
    expect(result.phase).toBe('failed');
    expect(result.reason).toEqual({ code: 'provider_error', providerCode: 'qr_expired' });
    expect(result.operations.map((o) => o.error)).toEqual(['qr_expired', 'qr_expired']);
    expect(result.events.filter((e) => e.type === 'renew_payment')).toHaveLength(1);
    expect(await expiring.moves(started.sessionId)).toEqual([]);
  });
});
