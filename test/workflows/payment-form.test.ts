/**
 * The payment-form widget: the workflow creates the public token (surfaced early), the payer enters
 * the card in the provider's widget (never through paysaga), the payment goes on as a card payment.
 * Each with webhooks on and off (polling only).
 */
import { request } from 'undici';
import type { SessionView } from '../../workflows/types';
import { completeThreeDs } from '../helpers/payer';
import { startStack, type TestStack } from '../helpers/stack';

const FRICTIONLESS = '4111111111111111';
const THREE_DS = '4000000000003063';
const rub = (amount: number) => ({ amount, currency: 'RUB' });
let n = 0;
const ref = (p: string) => `form-${p}-${Date.now()}-${++n}`;

describe.each([true, false])('payment form (webhooks %s)', (webhooks) => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ webhooks });
  });
  afterAll(async () => {
    await stack?.close();
  });

  const finished = (sessionId: string): Promise<SessionView> =>
    stack.temporal.workflow.getHandle(sessionId).result();

  async function moves(sessionId: string): Promise<[string, number][]> {
    const ledger = await stack.sandbox.ledger(sessionId);
    return ledger.entries.map((e) => [e.kind, e.amount]);
  }

  async function until(sessionId: string, pred: (v: SessionView) => boolean, ms = 20_000) {
    const deadline = Date.now() + ms;
    for (;;) {
      const v = await stack.payments.getSession(sessionId);
      if (pred(v)) return v;
      if (Date.now() > deadline)
        throw new Error(`session ${sessionId} never got there: ${JSON.stringify(v)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

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
    const started = await stack.payments.startPaymentForm(
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
    const started = await stack.payments.startPaymentForm(
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

    const mit = await stack.payments.startRecurringPayment({
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
    const started = await stack.payments.startPaymentForm(
      { reference: ref('no-offer'), amount: rub(300), customer: { user_id: 'u1' } },
      { waitMs: 15_000 },
    );
    await payInWidget(started.publicToken!, FRICTIONLESS, true);
    const result = await finished(started.sessionId);
    expect(result.phase).toBe('succeeded');
    expect(result.recurringToken).toBeUndefined();
  });

  it('a 3-D Secure card in the widget: the redirect is surfaced, code 12345 succeeds', async () => {
    const started = await stack.payments.startPaymentForm(
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
    const challenged = await stack.payments.waitForProgress(started.sessionId, 15_000);
    expect(challenged.phase).toBe('awaiting_payer');
    expect(challenged.userAction?.destination_info?.url_address).toContain('/sandbox/3ds/');
    const back = await completeThreeDs(challenged.userAction, '12345');
    expect(back.html + (back.location ?? '')).toContain('https://shop.example/return');
    await stack.payments.notifyPayerReturned(started.sessionId);
    const result = await finished(started.sessionId);
    expect(result.phase).toBe('succeeded');
    expect(await moves(started.sessionId)).toEqual([
      ['hold', 1_500],
      ['capture', 1_500],
    ]);
  });

  it('the payer never uses the form: canceled after the payer deadline, nothing charged', async () => {
    const started = await stack.payments.startPaymentForm({
      reference: ref('idle'),
      amount: rub(500),
      customer: { user_id: 'u1' },
      settings: { deadlines: { payerActionMs: 1_500 } },
    });
    const result = await finished(started.sessionId);
    expect(result.phase).toBe('canceled');
    expect(result.reason).toBe('payer_did_not_use_the_payment_form');
    expect(result.operations).toEqual([]);
    expect(await moves(started.sessionId)).toEqual([]);
  });
});
