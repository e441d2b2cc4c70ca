/**
 * The payment-form widget: the workflow creates the public token (surfaced early), the payer enters
 * the card in the provider's widget (never through paysaga), the payment goes on as a card payment.
 * Each with webhooks on and off (polling only).
 */
import { request } from 'undici';
import { completeThreeDs } from '../helpers/payer';
import { startStack, type TestStack } from '../helpers/stack';
import { FRICTIONLESS, THREE_DS, references, rub, sessionHelpers } from '../helpers/workflow-test';

const ref = references('form');

describe.each([true, false])('payment form (webhooks %s)', (webhooks) => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ webhooks });
  });
  afterAll(async () => {
    await stack?.close();
  });

  const { finished, moves, until } = sessionHelpers(() => stack);

  /** The payer fills in the widget the public token opens (what the browser widget sends). */
  async function payInWidget(publicToken: string, pan: string, autopay?: boolean) {
    const res = await request(`${stack.sandbox.url}/sandbox/widgets/payment-form`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        public_token: publicToken,
        card_number: pan,
        card_exp_month: '12',
        card_exp_year: '2030',
        card_code: '123',
        ...(autopay !== undefined ? { autopay } : {}),
      }),
    });
    const body = (await res.body.json()) as { status: string; payment_id?: string };
    expect(body.status).toBe('ok');
    return body;
  }

  it('surfaces the public token early; the payer pays with a card in the widget', async () => {
    const started = await stack.payments.sessions.startPaymentForm(
      { reference: ref('pay'), amount: rub(4_200), customer: { user_id: 'u1' }, widget: { lang: 'en' } },
      { waitMs: 15_000 },
    );
    expect(started.phase).toBe('starting');
    expect(started.publicToken).toBeTruthy();
    expect(started.operations).toEqual([]);
    // The widget page opens with it.
    const page = await request(
      `${stack.sandbox.url}/sandbox/widgets/payment-form?public_token=${started.publicToken}`,
    );
    expect(await page.body.text()).toContain('Card number');
    await payInWidget(started.publicToken!, FRICTIONLESS);
    const result = await finished(started.sessionId);
    expect(result.phase).toBe('succeeded');
    expect(result.recurringToken).toBeUndefined();
    expect(result.operations[0]).toMatchObject({ kind: 'payment', status: 'successful', amount: 4_200 });
    expect(JSON.stringify(result)).not.toContain(FRICTIONLESS);
    expect(await moves(started.sessionId)).toEqual([
      ['hold', 4_200],
      ['capture', 4_200],
    ]);
  });

  it('with the autopay consent ticked a recurring token comes back, and it pays by MIT', async () => {
    const started = await stack.payments.sessions.startPaymentForm(
      {
        reference: ref('autopay'),
        amount: rub(990),
        customer: { user_id: 'u1' },
        widget: { showAutopayOption: true },
      },
      { waitMs: 15_000 },
    );
    const page = await request(
      `${stack.sandbox.url}/sandbox/widgets/payment-form?public_token=${started.publicToken}`,
    );
    expect(await page.body.text()).toContain('name="autopay"');
    await payInWidget(started.publicToken!, FRICTIONLESS, true);
    const result = await finished(started.sessionId);
    expect(result.phase).toBe('succeeded');
    expect(result.recurringToken).toMatch(/^rt_/);

    const mit = await stack.payments.sessions.startRecurringPayment({
      reference: ref('autopay-mit'),
      amount: rub(990),
      token: result.recurringToken!,
      customer: { user_id: 'u1' },
    });
    expect((await finished(mit.sessionId)).phase).toBe('succeeded');
    expect(await moves(mit.sessionId)).toEqual([
      ['hold', 990],
      ['capture', 990],
    ]);
  });

  it('the consent is not there unless the form offered it: no token', async () => {
    const started = await stack.payments.sessions.startPaymentForm(
      { reference: ref('no-offer'), amount: rub(300), customer: { user_id: 'u1' } },
      { waitMs: 15_000 },
    );
    await payInWidget(started.publicToken!, FRICTIONLESS, true);
    const result = await finished(started.sessionId);
    expect(result.phase).toBe('succeeded');
    expect(result.recurringToken).toBeUndefined();
  });

  it('a 3-D Secure card in the widget: the redirect is surfaced, code 12345 succeeds', async () => {
    const started = await stack.payments.sessions.startPaymentForm(
      {
        reference: ref('3ds'),
        amount: rub(1_500),
        customer: { user_id: 'u1' },
        backUrl: 'https://shop.example/return',
      },
      { waitMs: 15_000 },
    );
    await payInWidget(started.publicToken!, THREE_DS);
    // Once the payer used the form, early return waits for the payment's news, not the token's.
    await until(started.sessionId, (v) => v.operations.length > 0);
    const challenged = await stack.payments.sessions.waitForChange(started.sessionId, {
      timeoutMs: 15_000,
      until: 'progress',
    });
    expect(challenged.phase).toBe('awaiting_payer');
    expect(challenged.userAction?.destination_info?.url_address).toContain('/sandbox/3ds/');
    const back = await completeThreeDs(challenged.userAction, '12345');
    expect(back.html + (back.location ?? '')).toContain('https://shop.example/return');
    await stack.payments.sessions.notifyPayerReturned(started.sessionId);
    const result = await finished(started.sessionId);
    expect(result.phase).toBe('succeeded');
    expect(await moves(started.sessionId)).toEqual([
      ['hold', 1_500],
      ['capture', 1_500],
    ]);
  });

  it('the payer never uses the form: canceled after the payer deadline, nothing charged', async () => {
    const started = await stack.payments.sessions.startPaymentForm({
      reference: ref('idle'),
      amount: rub(500),
      customer: { user_id: 'u1' },
      settings: { deadlines: { payerActionMs: 1_500 } },
    });
    const result = await finished(started.sessionId);
    expect(result.phase).toBe('canceled');
    expect(result.reason).toEqual({ code: 'payer_did_not_use_the_payment_form' });
    expect(result.operations).toEqual([]);
    expect(await moves(started.sessionId)).toEqual([]);
  });
});
