import { request } from 'undici';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox';
import { checkoutApproved, eventTypes, parseForm, transferApproved, waitForEvent } from './flow';
import { cardPayment, isFinal, RUB, user } from './fixtures';

/* eslint-disable @typescript-eslint/no-explicit-any */

describe('sandbox: recurring tokens (rules 2, 8, 9), MIT and CIT', () => {
  let sb: TestSandbox;
  beforeAll(async () => {
    sb = await startTestSandbox({ projects: [{ id: 'shop' }, { id: 'payouts' }] });
  });
  afterAll(() => sb.close());

  const recurring = (token: string, initiatedBy?: 'client' | 'merchant') => ({
    type: 'recurring_token_info',
    recurring_token_info: { token, ...(initiatedBy ? { initiated_by: initiatedBy } : {}) },
  });

  async function obtainToken(projectId = 'shop'): Promise<string> {
    const id = await checkoutApproved(
      sb,
      {
        payment_info: cardPayment(),
        sum_info: RUB(100),
        user_info: user(),
        payment_settings: { allow_recurring: true },
      },
      { projectId },
    );
    const final = await sb.waitForSession(id, isFinal, { projectId });
    const info = final.payments[0].recurring_token_info;
    expect(info).toMatchObject({
      token: expect.stringMatching(/^rt_/),
      token_active: true,
      type: 'recurring_token',
    });
    expect(info.created_date).toMatch(/\+03:00$/);
    return info.token;
  }

  it('rule 9: a first payment with allow_recurring gives a token; without it none', async () => {
    await obtainToken();
    const id = await checkoutApproved(
      sb,
      { payment_info: cardPayment(), sum_info: RUB(100), user_info: user() },
      { projectId: 'shop' },
    );
    expect(
      (await sb.waitForSession(id, isFinal, { projectId: 'shop' })).payments[0].recurring_token_info,
    ).toBeUndefined();
  });

  it('MIT: init/checkout with the token, no payer action', async () => {
    const token = await obtainToken();
    const id = await checkoutApproved(
      sb,
      { payment_info: recurring(token), sum_info: RUB(1500), user_info: user() },
      { projectId: 'shop' },
    );
    const final = await sb.waitForSession(id, isFinal, { projectId: 'shop' });
    expect(final.payments[0].transaction_status).toBe('successful');
    expect(final.payments[0].payment_info).toMatchObject({
      type: 'recurring_token_info',
      recurring_token_info: { token },
      card_info: { card_last4: '1111' },
    });
    expect(await eventTypes(sb, id)).toEqual(['approve_pending', 'checkout_results']);
  });

  it('CIT: initiated_by client needs back_url and goes through 3-D Secure', async () => {
    const token = await obtainToken();
    const noBack = await sb.post(
      'transaction/init/checkout',
      { payment_info: recurring(token, 'client'), sum_info: RUB(100), user_info: user() },
      { projectId: 'shop' },
    );
    expect(noBack.body.error).toEqual({
      error_code: 'invalid_request',
      error_description: 'payment_settings.back_url.not_null',
    });
    const id = await checkoutApproved(
      sb,
      {
        payment_info: recurring(token, 'client'),
        sum_info: RUB(300),
        user_info: user(),
        payment_settings: { back_url: 'https://shop.example/cit-back' },
      },
      { projectId: 'shop' },
    );
    await waitForEvent(sb, id, 'action_pending');
    const session = await sb.waitForSession(id, (s: any) => s.payments[0].user_action !== undefined, {
      projectId: 'shop',
    });
    const dest = session.payments[0].user_action.destination_info;
    const page = parseForm(await (await request(dest.url_address)).body.text());
    const done = await request(new URL(page.action, sb.url).toString(), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ code: '12345' }),
    });
    const back = parseForm(await done.body.text());
    expect(back.action).toBe('https://shop.example/cit-back');
    expect((await sb.waitForSession(id, isFinal, { projectId: 'shop' })).payments[0].transaction_status).toBe(
      'successful',
    );
    expect(await eventTypes(sb, id)).toEqual(['approve_pending', 'action_pending', 'checkout_results']);
  });

  it('rule 2: disable gives token_active false; a payment with it then fails', async () => {
    const token = await obtainToken();
    const disabled = await sb.post(
      'recurring_token/disable',
      { recurring_token_info: { token } },
      { projectId: 'shop' },
    );
    expect(disabled.body).toMatchObject({
      status: 'ok',
      recurring_token_info: { token, token_active: false, completed_date: expect.stringMatching(/^2000-/) },
    });
    const state = await sb.post(
      'public_token/state',
      { type: 'recurring_token', recurring_token: { token } },
      { projectId: 'shop' },
    );
    expect(state.body.token_info).toMatchObject({ type: 'recurring_token', token, token_active: false });

    const res = await sb.post(
      'transaction/init/checkout',
      { payment_info: recurring(token), sum_info: RUB(100), user_info: user() },
      { projectId: 'shop' },
    );
    expect(res.body.status).toBe('ok');
    const final = await sb.waitForSession(res.body.session_info.id, isFinal, { projectId: 'shop' });
    expect(final.transaction_status).toBe('canceled');
    expect(final.payments[0]).toMatchObject({
      transaction_status: 'unsuccessful',
      error: { error_code: 'recurring_token_inactive' },
    });
    expect(await eventTypes(sb, final.id)).toEqual(['checkout_results']);
    expect((await sb.ledger(final.id)).entries).toEqual([]);
    // and a payout by it too
    const payout = await sb.post(
      'transaction/init/transfer',
      { payout_info: recurring(token), sum_info: RUB(100) },
      { projectId: 'shop' },
    );
    const pf = await sb.waitForSession(payout.body.session_info.id, isFinal, { projectId: 'shop' });
    expect(pf.payouts[0].error.error_code).toBe('recurring_token_inactive');
  });

  it('tokens belong to their project for payments and disable; unknown tokens are not found', async () => {
    const token = await obtainToken('shop');
    const elsewhere = await sb.post(
      'transaction/init/checkout',
      { payment_info: recurring(token), sum_info: RUB(100), user_info: user() },
      { projectId: 'payouts' },
    );
    expect(elsewhere.body.error).toEqual({
      error_code: 'repository_record_not_found',
      error_description: 'payment_info.recurring_token_info.token',
    });
    const disable = await sb.post(
      'recurring_token/disable',
      { recurring_token_info: { token } },
      { projectId: 'payouts' },
    );
    expect(disable.body.error.error_code).toBe('repository_record_not_found');
    const unknown = await sb.post(
      'transaction/init/checkout',
      { payment_info: recurring('rt_nope'), sum_info: RUB(100), user_info: user() },
      { projectId: 'shop' },
    );
    expect(unknown.status).toBe(404);
  });

  it('rule 8: a payout by recurring token works from another project, to the same card', async () => {
    const token = await obtainToken('shop');
    const id = await transferApproved(
      sb,
      { payout_info: recurring(token), sum_info: RUB(5000) },
      { projectId: 'payouts' },
    );
    const final = await sb.waitForSession(id, isFinal, { projectId: 'payouts' });
    expect(final.payouts[0].transaction_status).toBe('successful');
    expect(final.payouts[0].payout_info.card_info).toMatchObject({ card_last4: '1111', card_bin: '411111' });
    expect((await sb.ledger(id)).entries.map((e) => [e.kind, e.amount, e.projectId])).toEqual([
      ['payout', 5000, 'payouts'],
    ]);
  });
});
