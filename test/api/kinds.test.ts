/**
 * The other creating routes (payment form, FPS, recurring, payouts, identity checks, FPS bindings) and
 * the pass-through routes (public tokens, banks, token info, recurring-token disable), over HTTP.
 */
import { sql } from 'kysely';
import { request } from 'undici';
import { payFpsQr } from '../helpers/payer';
import { card, finished, FRICTIONLESS, ref, rub, useApiStack, workflowsFor } from './api-stack';

jest.setTimeout(60_000);

const s = useApiStack();

const BANK = '100000000111';

async function create(path: string, body: Record<string, unknown>, wait = 15_000) {
  const res = await s.call('POST', `${path}?wait=${wait}`, { body: { reference: ref('kind'), ...body } });
  if (res.status !== 201) throw new Error(`${path} answered ${res.status}: ${res.text}`);
  return res.body;
}

describe('checkout methods', () => {
  it('payment_form: answers with the widget public token; token-info knows it', async () => {
    const view = await create('/v1/checkouts', {
      method: 'payment_form',
      amount: rub(1_200),
      customer: { user_id: 'u1' },
    });
    expect(view.kind).toBe('payment_form');
    expect(typeof view.publicToken).toBe('string');
    const info = await s.call('POST', '/v1/token-info', {
      body: { type: 'public_token', public_token: { token: view.publicToken } },
    });
    expect(info.status).toBe(200);
    expect(info.body.token_info).toBeDefined();
    await s.call('POST', `/v1/sessions/${view.sessionId}/cancel`);
  });

  it('fps: answers with the QR; the payer pays; the session succeeds', async () => {
    const view = await create('/v1/checkouts', {
      method: 'fps',
      amount: rub(3_000),
      customer: { user_id: 'u1' },
    });
    expect(view.phase).toBe('awaiting_payer');
    expect(view.userAction.payment_qr.qr_data.qr_content).toBeTruthy();
    const paymentId = view.lastSnapshot.payments.at(-1).id as string;
    expect(await payFpsQr(s.stack.sandbox.url, paymentId)).toBe(200);
    expect((await finished(s, view.sessionId)).phase).toBe('succeeded');
  });

  it('recurring: a card payment that asks for a token, then a merchant-initiated charge with it; disable; token-info', async () => {
    const first = await create('/v1/checkouts', {
      method: 'card',
      amount: rub(100),
      card: card(FRICTIONLESS),
      customer: { user_id: 'u1' },
      allowRecurring: true,
    });
    const paid = await finished(s, first.sessionId);
    expect(paid.phase).toBe('succeeded');
    const token = paid.recurringToken as string;
    expect(token).toBeTruthy();

    const mit = await create('/v1/checkouts', {
      method: 'recurring',
      amount: rub(250),
      token,
      customer: { user_id: 'u1' },
    });
    expect(mit.kind).toBe('recurring_payment');
    expect((await finished(s, mit.sessionId)).phase).toBe('succeeded');

    const disabled = await s.call('POST', '/v1/recurring-tokens/disable', { body: { token } });
    expect(disabled.status).toBe(200);
    expect(disabled.body.recurring_token_info.token_active).toBe(false);
    const info = await s.call('POST', '/v1/token-info', {
      body: { type: 'recurring_token', recurring_token: { token } },
    });
    expect(info.status).toBe(200);
    expect(info.body.token_info.token_active).toBe(false);
  });
});

describe('recurring tokens from an FPS payment; merchant-initiated payments in one init/checkout', () => {
  /** The provider calls paysaga made for a session, in order (the sandbox's request log). */
  async function calls(sessionId: string): Promise<string[]> {
    const res = await s.stack.sandbox.plain('GET', `/sandbox/requests?session_id=${sessionId}`);
    return (res.body.requests as { endpoint: string }[]).map((r) => r.endpoint);
  }

  it('an FPS payment with allowRecurring gives a token; a MIT and a subscription charge each open with init/checkout', async () => {
    const first = await create('/v1/checkouts', {
      method: 'fps',
      amount: rub(1_500),
      customer: { user_id: 'u-fps-token' },
      allowRecurring: true,
    });
    const paymentId = first.lastSnapshot.payments.at(-1).id as string;
    expect(await payFpsQr(s.stack.sandbox.url, paymentId)).toBe(200);
    const paid = await finished(s, first.sessionId);
    expect(paid.phase).toBe('succeeded');
    const token = paid.recurringToken as string;
    expect(token).toMatch(/^rt_/);
    // The first FPS payment: initiate, then start/checkout asking for the token.
    expect(await calls(first.sessionId)).toEqual(
      expect.arrayContaining(['transaction/initiate', 'transaction/start/checkout']),
    );

    const mit = await create('/v1/checkouts', {
      method: 'recurring',
      amount: rub(990),
      token,
      customer: { user_id: 'u-fps-token' },
    });
    expect((await finished(s, mit.sessionId)).phase).toBe('succeeded');
    const mitCalls = await calls(mit.sessionId);
    // The session and its payment in one call: no initiate, no start.
    expect(mitCalls[0]).toBe('transaction/init/checkout');
    expect(mitCalls.filter((c) => c === 'transaction/init/checkout')).toHaveLength(1);
    expect(mitCalls).not.toContain('transaction/initiate');
    expect(mitCalls).not.toContain('transaction/start/checkout');
    expect((await s.stack.sandbox.ledger(mit.sessionId)).entries.filter((e) => e.kind !== 'hold')).toEqual([
      expect.objectContaining({ kind: expect.stringMatching(/capture|charge/), amount: 990 }),
    ]);

    const sub = await s.call('POST', '/v1/subscriptions', {
      body: {
        reference: ref('fps-sub'),
        token,
        amount: rub(400),
        schedule: { interval: 'second', count: 1 },
        endAfterPeriods: 1,
        customer: { user_id: 'u-fps-token' },
      },
    });
    expect(sub.status).toBe(201);
    await s.stack.temporal.workflow.getHandle(sub.body.subscriptionId).result();
    const ended = (await s.call('GET', `/v1/subscriptions/${sub.body.subscriptionId}`)).body;
    expect(ended).toMatchObject({ status: 'ended', totals: { succeeded: 1 } });
    const chargeCalls = await calls(ended.charges[0].sessionId);
    expect(chargeCalls[0]).toBe('transaction/init/checkout');
    expect(chargeCalls).not.toContain('transaction/initiate');
    expect(chargeCalls).not.toContain('transaction/start/checkout');
  });

  it("an init/checkout whose answer was lost is not sent again past the key's 24 hours: 409, nothing sent", async () => {
    const first = await create('/v1/checkouts', {
      method: 'card',
      amount: rub(100),
      card: card(FRICTIONLESS),
      customer: { user_id: 'u-window' },
      allowRecurring: true,
    });
    const token = (await finished(s, first.sessionId)).recurringToken as string;
    const body = {
      method: 'recurring',
      reference: ref('window'),
      amount: rub(300),
      token,
      customer: { user_id: 'u-window' },
    };
    // The provider does not answer: the outcome of this init/checkout is unknown.
    await s.stack.sandbox.plain('POST', '/sandbox/faults', {
      rules: [{ kind: 'error_5xx', status: 503, path: 'transaction/init/checkout' }],
    });
    try {
      const lost = await s.call('POST', '/v1/checkouts', { body });
      expect(lost.status).toBeGreaterThanOrEqual(500);
    } finally {
      await s.stack.sandbox.plain('DELETE', '/sandbox/faults');
    }
    // A day later the key is gone: the same request is refused instead of sent again.
    await s.stack.store.db
      .updateTable('client_references')
      .set({ created_at: sql<Date>`now() - interval '24 hours'` })
      .where('reference', '=', body.reference)
      .execute();
    const before = (await s.stack.sandbox.plain('GET', '/sandbox/requests')).body.requests.length;
    const again = await s.call('POST', '/v1/checkouts', { body });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('retry_window_passed');
    expect((await s.stack.sandbox.plain('GET', '/sandbox/requests')).body.requests.length).toBe(before);
  });

  it("the payment form on the partner's recorded consent: allowRecurring without the checkbox", async () => {
    const view = await create('/v1/checkouts', {
      method: 'payment_form',
      amount: rub(1_100),
      customer: { user_id: 'u-consent' },
      allowRecurring: true,
    });
    const token = view.publicToken as string;
    expect(token).toMatch(/^pt_/);
    const res = await s.stack.sandbox.plain('POST', '/sandbox/widgets/payment-form', {
      public_token: token,
      card_number: FRICTIONLESS,
      card_exp_month: '12',
      card_exp_year: '30',
      card_code: '123',
    });
    expect(res.status).toBe(200);
    const paid = await finished(s, view.sessionId);
    expect(paid.phase).toBe('succeeded');
    expect(paid.recurringToken).toMatch(/^rt_/);
  });
});

describe('POST /v1/payouts', () => {
  it('to a card: succeeds; the card number is not in the answer', async () => {
    const res = await s.call('POST', '/v1/payouts?wait=15000', {
      body: { amount: rub(700), destination: { type: 'card', card: { card_number: FRICTIONLESS } } },
      idempotencyKey: ref('payout'),
    });
    expect(res.status).toBe(201);
    expect(res.body.kind).toBe('payout');
    expect(res.text.includes(FRICTIONLESS)).toBe(false);
    expect((await finished(s, res.body.sessionId)).phase).toBe('succeeded');
  });

  it('to an FPS account', async () => {
    const view = await create('/v1/payouts', {
      amount: rub(800),
      destination: { type: 'fps_account', phone: '+79001234567', bankId: BANK },
    });
    expect((await finished(s, view.sessionId)).phase).toBe('succeeded');
  });

  it('400 naming the field for a bad destination, nothing started', async () => {
    const reference = ref('bad-payout');
    const res = await s.call('POST', '/v1/payouts', {
      body: { reference, amount: rub(800), destination: { type: 'fps_account', phone: '12', bankId: BANK } },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.fields).toEqual([
      { field: 'destination.phone', rule: 'a phone number of 10 to 15 digits' },
    ]);
    expect(await workflowsFor(s, reference)).toBe(0);
  });
});

describe('POST /v1/identity-checks', () => {
  it('a registered phone succeeds; one not registered ends canceled; the same key returns the same check', async () => {
    const payee = { full_name: 'Ivan Petrov' };
    const key = ref('idc');
    const ok = await s.call('POST', '/v1/identity-checks?wait=15000', {
      body: { phone: '+79001234567', bankId: BANK, payee },
      idempotencyKey: key,
    });
    expect(ok.status).toBe(201);
    expect(ok.body.kind).toBe('identity_check');
    expect((await finished(s, ok.body.sessionId)).phase).toBe('succeeded');
    const again = await s.call('POST', '/v1/identity-checks', {
      body: { phone: '+79001234567', bankId: BANK, payee },
      idempotencyKey: key,
    });
    expect(again.status).toBe(200);
    expect(again.body.sessionId).toBe(ok.body.sessionId);
    const unknown = await create('/v1/identity-checks', { phone: '+79000000000', bankId: BANK, payee });
    expect((await finished(s, unknown.sessionId)).phase).toBe('canceled');
  });

  it('400 for a missing payee', async () => {
    const res = await s.call('POST', '/v1/identity-checks', {
      body: { reference: ref('idc-bad'), phone: '+79001234567', bankId: BANK },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.fields[0].field).toBe('payee');
  });
});

describe('POST /v1/fps-bindings', () => {
  it('the payer confirms in the bank app; the session ends with a recurring token', async () => {
    const view = await create('/v1/fps-bindings', { customer: { user_id: 'u1' } });
    expect(view.kind).toBe('fps_binding');
    const paymentId = view.lastSnapshot?.payments?.at(-1)?.id as string | undefined;
    expect(paymentId).toBeTruthy();
    expect(await payFpsQr(s.stack.sandbox.url, paymentId!)).toBe(200);
    const result = await finished(s, view.sessionId);
    expect(result.phase).toBe('succeeded');
    expect(result.recurringToken).toBeTruthy();
  });
});

describe('provider pass-through', () => {
  it('POST /v1/public-tokens: 201 with a token; 400 naming the field when no config is given', async () => {
    const res = await s.call('POST', '/v1/public-tokens', {
      body: { card_tokenize: { allow_tokenization: true } },
    });
    expect(res.status).toBe(201);
    expect(typeof res.body.public_token).toBe('string');
    const bad = await s.call('POST', '/v1/public-tokens', { body: {} });
    expect(bad.status).toBe(400);
    expect(bad.body.error.fields).toEqual([{ field: 'card_tokenize', rule: 'not_null' }]);
  });

  it('the card-tokenize widget hashes a card; token-info describes it (no card number back)', async () => {
    const tok = await s.call('POST', '/v1/public-tokens', {
      body: { card_tokenize: { allow_tokenization: false } },
    });
    const widget = await request(`${s.stack.sandbox.url}/sandbox/widgets/card-tokenize`, {
      method: 'POST',
      body: JSON.stringify({ public_token: tok.body.public_token, card_number: FRICTIONLESS }),
      headers: { 'content-type': 'application/json' },
    });
    const hashed = ((await widget.body.json()) as { hashed_card_details: Record<string, string> })
      .hashed_card_details;
    const info = await s.call('POST', '/v1/token-info', {
      body: { type: 'card_info', card_info: { type: 'hashed_card_details', hashed_card_details: hashed } },
    });
    expect(info.status).toBe(200);
    expect(info.body.token_info.card_last4).toBe('1111');
    expect(info.text.includes(FRICTIONLESS)).toBe(false);
  });

  it('GET /v1/banks lists the FPS banks', async () => {
    const res = await s.call('GET', '/v1/banks');
    expect(res.status).toBe(200);
    expect(res.body.banks.map((b: { id: string }) => b.id)).toContain(BANK);
  });

  it('POST /v1/token-info: an unknown token is 404 naming the field the caller sent; a bad type is 400', async () => {
    const res = await s.call('POST', '/v1/token-info', {
      body: { type: 'recurring_token', recurring_token: { token: 'nope' } },
    });
    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({
      code: 'not_found',
      retryable: false,
      fields: [{ field: 'recurring_token.token' }],
    });
    const bad = await s.call('POST', '/v1/token-info', { body: { type: 'banana' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.fields[0].field).toBe('type');
  });

  it('POST /v1/recurring-tokens/disable: 400 without a token', async () => {
    const res = await s.call('POST', '/v1/recurring-tokens/disable', { body: {} });
    expect(res.status).toBe(400);
    expect(res.body.error.fields[0].field).toBe('token');
  });
});
