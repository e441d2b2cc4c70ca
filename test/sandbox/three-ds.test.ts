import { request } from 'undici';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox';
import { startWebhookSink, type WebhookSink } from '../helpers/webhook-sink';
import { checkoutApproved, eventTypes, parseForm, state, waitForEvent } from './flow';
import { CARDS, cardPayment, isFinal, RUB, user } from './fixtures';

/* eslint-disable @typescript-eslint/no-explicit-any */

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/** The payer in a browser: opens the 3-D Secure page by the given method and submits `code`. Returns the last response. */
async function payerPasses3ds(sb: TestSandbox, action: any, code: string) {
  const dest = action.destination_info;
  const pageRes =
    dest.http_method === 'POST'
      ? await request(dest.url_address, { method: 'POST', headers: FORM, body: form(dest.extra_params) })
      : await request(dest.url_address);
  expect(pageRes.statusCode).toBe(200);
  const page = parseForm(await pageRes.body.text());
  expect(page.fields).toHaveProperty('code');
  const submit = await request(new URL(page.action, sb.url).toString(), {
    method: 'POST',
    headers: FORM,
    body: form({ ...page.fields, code }),
  });
  return { status: submit.statusCode, headers: submit.headers, html: await submit.body.text() };
}

describe('sandbox: card payment with 3-D Secure', () => {
  let sink: WebhookSink;
  let sb: TestSandbox;
  const projects = [
    { id: 'post_return' },
    { id: 'get_return', returnMethod: 'GET' as const },
    { id: 'named_return', returnMethod: 'GET' as const, returnParams: true },
  ];

  beforeAll(async () => {
    sink = await startWebhookSink();
    sb = await startTestSandbox({ webhookUrl: sink.url, projects });
  });
  afterAll(async () => {
    await sb.close();
    await sink.close();
  });

  const backUrl = () => sink.url.replace('/webhooks', '/shop/return?order=7');

  async function threeDsSession(projectId: string): Promise<{ id: string; action: any }> {
    const id = await checkoutApproved(
      sb,
      {
        payment_info: cardPayment(CARDS.threeDs),
        sum_info: RUB(5000),
        user_info: user(),
        payment_settings: { back_url: backUrl() },
      },
      { projectId },
    );
    await waitForEvent(sb, id, 'action_pending');
    const hook = await sink.waitFor(
      (h) => h.body?.type === 'action_pending' && h.body.session_info.id === id,
    );
    const action = hook.body.session_info.payments[0].user_action;
    expect(hook.body.session_info.payments[0].transaction_status).toBe('ongoing');
    return { id, action };
  }

  it('action_pending carries the 3-DS redirect; code 12345 passes and the payer is POSTed back to back_url', async () => {
    const { id, action } = await threeDsSession('post_return');
    expect(action.type).toBe('destination_info');
    expect(action.destination_info).toMatchObject({
      http_method: 'POST',
      extra_params: { MD: expect.any(String), PaReq: expect.any(String) },
    });
    expect(action.destination_info.url_address).toContain(`${sb.url}/sandbox/3ds/`);

    const done = await payerPasses3ds(sb, action, '12345');
    expect(done.status).toBe(200);
    const back = parseForm(done.html);
    expect(back.method).toBe('POST');
    expect(back.action).toBe(backUrl());
    // The spec promises only the return to back_url: the form carries the issuer's MD and PaRes, nothing
    // that names the session.
    expect(Object.keys(back.fields).sort()).toEqual(['MD', 'PaRes']);
    // The browser auto-submits the form: the shop's return address receives a POST.
    await request(back.action, { method: 'POST', headers: FORM, body: form(back.fields) });
    const ret = await sink.waitFor((h) => h.path === '/shop/return?order=7' && h.method === 'POST');
    expect(ret.rawBody.toString()).not.toContain(id);

    const final = await sb.waitForSession(id, isFinal);
    expect(final.transaction_status).toBe('completed');
    expect(final.payments[0].transaction_status).toBe('successful');
    expect(final.payments[0].user_action).toBeUndefined();
    expect(await eventTypes(sb, id)).toEqual(['approve_pending', 'action_pending', 'checkout_results']);
  });

  it('returns by GET redirect when the project says so', async () => {
    const { id, action } = await threeDsSession('get_return');
    const done = await payerPasses3ds(sb, action, '12345');
    expect(done.status).toBe(303);
    // back_url exactly as given.
    expect(done.headers.location).toBe(backUrl());
    await request(String(done.headers.location));
    await sink.waitFor((h) => h.method === 'GET' && h.path === '/shop/return?order=7');
    expect((await sb.waitForSession(id, isFinal, { projectId: 'get_return' })).transaction_status).toBe(
      'completed',
    );
  });

  it('with returnParams the return also names the session and the payment', async () => {
    const { id, action } = await threeDsSession('named_return');
    const done = await payerPasses3ds(sb, action, '12345');
    const location = new URL(String(done.headers.location));
    expect(`${location.origin}${location.pathname}`).toBe(backUrl().split('?')[0]);
    expect(location.searchParams.get('order')).toBe('7');
    expect(location.searchParams.get('session_id')).toBe(id);
    expect(location.searchParams.get('payment_id')).toMatch(/^pm_/);
    await sb.waitForSession(id, isFinal, { projectId: 'named_return' });
  });

  it('any other code fails the payment; the page is then closed', async () => {
    const { id, action } = await threeDsSession('post_return');
    await payerPasses3ds(sb, action, '00000');
    const final = await sb.waitForSession(id, isFinal);
    expect(final.transaction_status).toBe('canceled');
    expect(final.error.error_code).toBe('session_cancelled');
    expect(final.payments[0]).toMatchObject({
      transaction_status: 'unsuccessful',
      error: { error_code: 'three_ds_failed' },
    });
    const again = await request(action.destination_info.url_address);
    expect(again.statusCode).toBe(404);
    await again.body.dump();
    expect((await sb.ledger(id)).entries).toEqual([]);
  });

  it('a frictionless card needs no payer action', async () => {
    const id = await checkoutApproved(
      sb,
      { payment_info: cardPayment(CARDS.frictionless), sum_info: RUB(100), user_info: user() },
      { projectId: 'post_return' },
    );
    await sb.waitForSession(id, isFinal);
    expect(await eventTypes(sb, id)).toEqual(['approve_pending', 'checkout_results']);
  });

  it('the decline test card ends unsuccessful with card_declined', async () => {
    const id = await checkoutApproved(
      sb,
      { payment_info: cardPayment(CARDS.declined), sum_info: RUB(100), user_info: user() },
      { projectId: 'post_return' },
    );
    const final = await sb.waitForSession(id, isFinal);
    expect(final.payments[0].error.error_code).toBe('card_declined');
    expect((await state(sb, id)).transaction_status).toBe('canceled');
  });
});
