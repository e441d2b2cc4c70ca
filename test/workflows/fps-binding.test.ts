/**
 * FPS recurring binding without a charge (spec rule 7): the payer confirms in the bank app and the
 * session yields a recurring token, nothing charged; a binding the payer never confirms ends without
 * one. Each with webhooks on and off (polling only).
 */
import { InputValidationError } from '../../client/errors';
import { payFpsQr } from '../helpers/payer';
import { fpsStacks, references, sessionHelpers } from '../helpers/workflow-test';

const ref = references('bind');

describe.each([true, false])('FPS binding (webhooks %s)', (webhooks) => {
  // `stack`: QRs live 10 s (tests where the payer acts); `shortQr`: 4 s (tests of expiry).
  const fx = fpsStacks(webhooks);

  const { finished, moves } = sessionHelpers(() => fx.stack);
  const expiring = sessionHelpers(() => fx.shortQr);

  it('the payer confirms: a recurring token, nothing charged; the token then pays by MIT', async () => {
    const started = await fx.stack.payments.sessions.startFpsBinding(
      { reference: ref('ok'), customer: { user_id: 'u-bind' }, backUrl: 'https://shop.example/return' },
      { waitMs: 15_000 },
    );
    expect(started.phase).toBe('awaiting_payer');
    const paymentId = started.operations[0]!.id;
    expect(started.userAction?.payment_qr?.qr_data?.qr_content).toBe(
      `${fx.stack.sandbox.url}/sandbox/fps/${paymentId}`,
    );
    expect(started.recurringToken).toBeUndefined();
    expect(await payFpsQr(fx.stack.sandbox.url, paymentId)).toBe(200);
    const result = await finished(started.sessionId);
    expect(result.phase).toBe('succeeded');
    expect(result.recurringToken).toMatch(/^rt_/);
    expect(result.operations).toEqual([
      { id: paymentId, kind: 'payment', status: 'successful', amount: 0, currency: 'rub' },
    ]);
    expect(await moves(started.sessionId)).toEqual([]);

    // The token charges the FPS account in one step, without the payer.
    const mit = await fx.stack.payments.sessions.startRecurringPayment({
      reference: ref('mit'),
      amount: { amount: 1_500, currency: 'RUB' },
      token: result.recurringToken!,
      customer: { user_id: 'u-bind' },
    });
    const charged = await finished(mit.sessionId);
    expect(charged.phase).toBe('succeeded');
    expect(charged.events.some((e) => e.detail?.includes('awaiting_payer'))).toBe(false);
    expect(await moves(mit.sessionId)).toEqual([['charge', 1_500]]);
  });

  it('the payer confirms only after the payer deadline: the provider is followed and the truth reported', async () => {
    const started = await fx.stack.payments.sessions.startFpsBinding(
      {
        reference: ref('late'),
        customer: { user_id: 'u-bind' },
        settings: { deadlines: { payerActionMs: 1_000 } },
      },
      { waitMs: 15_000 },
    );
    expect(started.phase).toBe('awaiting_payer');
    // Past paysaga's payer deadline (the workflow says so), before the provider's QR expiry: the
    // binding can still complete.
    const deadline = Date.now() + 20_000;
    while (
      !(await fx.stack.payments.sessions.get(started.sessionId)).events.some(
        (e) => e.type === 'payer_action_deadline',
      )
    ) {
      if (Date.now() > deadline) throw new Error('the payer deadline never passed');
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(await payFpsQr(fx.stack.sandbox.url, started.operations[0]!.id)).toBe(200);
    const result = await finished(started.sessionId);
    expect(result.phase).toBe('succeeded');
    expect(result.recurringToken).toBeDefined();
    expect(result.events.some((e) => e.type === 'payer_action_deadline')).toBe(true);
    expect(await moves(started.sessionId)).toEqual([]);
  });

  it('the QR expires: failed with qr_expired, no token', async () => {
    const started = await fx.shortQr.payments.sessions.startFpsBinding({
      reference: ref('expired'),
      customer: { user_id: 'u-bind' },
    });
    const result = await expiring.finished(started.sessionId);
    expect(result.phase).toBe('failed');
    expect(result.reason).toEqual({ code: 'provider_error', providerCode: 'qr_expired' });
    expect(result.recurringToken).toBeUndefined();
    expect(result.operations[0]).toMatchObject({ status: 'unsuccessful', error: 'qr_expired' });
    expect(await expiring.moves(started.sessionId)).toEqual([]);
  });

  it('without a user id or the payer IP the binding is refused before anything starts (rule 6)', async () => {
    await expect(
      fx.stack.payments.sessions.startFpsBinding({ reference: ref('anon') }),
    ).rejects.toBeInstanceOf(InputValidationError);
  });
});
