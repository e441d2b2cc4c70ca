/**
 * Recurring payments by token: the token from a first card payment with `allowRecurring`, then
 * merchant-initiated charges without the payer, customer-initiated ones through 3-D Secure, and a
 * disabled token refused by the provider. Each with webhooks on and off (polling only).
 */
import type { SessionView } from '../../common/views';
import { completeThreeDs } from '../helpers/payer';
import { startStack, type TestStack } from '../helpers/stack';
import { card, references, rub, sessionHelpers } from '../helpers/workflow-test';

const BACK_URL = 'https://shop.example/return';
const ref = references('rec');

describe.each([true, false])('recurring payments (webhooks %s)', (webhooks) => {
  let stack: TestStack;
  let token: string;
  beforeAll(async () => {
    stack = await startStack({ webhooks });
    token = await newToken();
  });
  afterAll(async () => {
    await stack?.close();
  });

  const { finished, moves } = sessionHelpers(() => stack);

  /** A first card payment with the payer's consent yields the token. */
  async function newToken(): Promise<string> {
    const first = await stack.payments.sessions.startCardCheckout({
      reference: ref('first'),
      amount: rub(100),
      card: card(),
      customer: { user_id: 'u-rec' },
      allowRecurring: true,
    });
    const result = await finished(first.sessionId);
    expect(result.phase).toBe('succeeded');
    expect(result.recurringToken).toMatch(/^rt_/);
    return result.recurringToken!;
  }

  /** A customer-initiated charge of 1 200 by the token: 3-D Secure, the payer comes back to BACK_URL. */
  function startCit(name: string): Promise<SessionView> {
    return stack.payments.sessions.startRecurringPayment(
      {
        reference: ref(name),
        amount: rub(1_200),
        token,
        initiatedBy: 'client',
        backUrl: BACK_URL,
        customer: { user_id: 'u-rec' },
      },
      { waitMs: 15_000 },
    );
  }

  it('a first payment without the consent yields no token', async () => {
    const started = await stack.payments.sessions.startCardCheckout({
      reference: ref('no-consent'),
      amount: rub(100),
      card: card(),
      customer: { user_id: 'u-rec' },
    });
    const result = await finished(started.sessionId);
    expect(result.phase).toBe('succeeded');
    expect(result.recurringToken).toBeUndefined();
  });

  it('MIT: the token pays without the payer, charged once', async () => {
    const started = await stack.payments.sessions.startRecurringPayment({
      reference: ref('mit'),
      amount: rub(2_500),
      token,
      customer: { user_id: 'u-rec' },
    });
    const result = await finished(started.sessionId);
    expect(result.phase).toBe('succeeded');
    expect(result.events.some((e) => e.detail?.includes('awaiting_payer'))).toBe(false);
    expect(result.operations).toEqual([
      { id: expect.any(String), kind: 'payment', status: 'successful', amount: 2_500, currency: 'rub' },
    ]);
    expect(await moves(started.sessionId)).toEqual([
      ['hold', 2_500],
      ['capture', 2_500],
    ]);
  });

  it('CIT: 3-D Secure is surfaced early; code 12345 and the payer back succeed', async () => {
    const started = await startCit('cit');
    expect(started.phase).toBe('awaiting_payer');
    expect(started.userAction?.destination_info?.url_address).toContain('/sandbox/3ds/');
    const back = await completeThreeDs(started.userAction, '12345');
    expect(back.html + (back.location ?? '')).toContain(BACK_URL);
    await stack.payments.sessions.notifyPayerReturned(started.sessionId);
    const result = await finished(started.sessionId);
    expect(result.phase).toBe('succeeded');
    expect(await moves(started.sessionId)).toEqual([
      ['hold', 1_200],
      ['capture', 1_200],
    ]);
  });

  it('CIT: a wrong 3-D Secure code fails with the provider reason, nothing charged', async () => {
    const started = await startCit('cit-bad');
    await completeThreeDs(started.userAction, '00000');
    await stack.payments.sessions.notifyPayerReturned(started.sessionId);
    const result = await finished(started.sessionId);
    expect(result.phase).toBe('failed');
    expect(result.reason).toEqual({ code: 'provider_error', providerCode: 'three_ds_failed' });
    expect(await moves(started.sessionId)).toEqual([]);
  });

  it('MIT for loser: canceled at the charge, the hold released', async () => {
    const started = await stack.payments.sessions.startRecurringPayment({
      reference: ref('loser'),
      amount: rub(800),
      token,
      customer: { user_id: 'u-rec', customer: { reference: 'loser' } },
    });
    const result = await finished(started.sessionId);
    expect(result.phase).toBe('failed');
    expect(result.reason).toEqual({ code: 'provider_error', providerCode: 'insufficient_funds' });
    expect(await moves(started.sessionId)).toEqual([
      ['hold', 800],
      ['release', 800],
    ]);
  });

  it('a disabled token: the payment fails with the provider reason, nothing charged', async () => {
    const own = await newToken();
    const disabled = await stack.provider.recurringTokenDisable({ recurring_token_info: { token: own } });
    expect(JSON.stringify(disabled)).toContain('"token_active":false');
    const started = await stack.payments.sessions.startRecurringPayment({
      reference: ref('disabled'),
      amount: rub(700),
      token: own,
      customer: { user_id: 'u-rec' },
    });
    const result = await finished(started.sessionId);
    expect(result.phase).toBe('failed');
    expect(result.reason).toEqual({ code: 'provider_error', providerCode: 'recurring_token_inactive' });
    expect(result.operations[0]).toMatchObject({ status: 'unsuccessful', error: 'recurring_token_inactive' });
    expect(await moves(started.sessionId)).toEqual([]);
  });
});
