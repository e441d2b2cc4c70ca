import { request } from 'undici';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox';
import { eventTypes, parseForm, waitForEvent } from './flow';
import { CARDS, isFinal, RUB, user } from './fixtures';
import { TEST_CARD } from '../../sandbox/test-cards';

describe('sandbox: public tokens (rule 1) and the payment-form widget', () => {
  let sb: TestSandbox;
  beforeAll(async () => {
    sb = await startTestSandbox();
  });
  afterAll(() => sb.close());

  const card = (pan: string = CARDS.frictionless) => ({
    card_number: pan,
    card_exp_month: '12',
    card_exp_year: '30',
    card_code: '321',
  });

  async function formSession(extra: Record<string, unknown> = {}) {
    const init = await sb.post('transaction/initiate', { sum_info: RUB(4900), user_info: user(), ...extra });
    return init.body.session_info.id as string;
  }

  it('payment_form_config.session_id must be unique among configs', async () => {
    const id = await formSession();
    const first = await sb.post('public_token', { payment_form_config: { session_id: id, lang: 'ru' } });
    expect(first.body).toEqual({ status: 'ok', public_token: expect.stringMatching(/^pt_/) });
    const second = await sb.post('public_token', { payment_form_config: { session_id: id } });
    expect(second.status).toBe(400);
    expect(second.body.error).toEqual({
      error_code: 'invalid_request',
      error_description: 'payment_form_config.session_id.not_unique',
    });
    const unknown = await sb.post('public_token', { payment_form_config: { session_id: 'ps_424242' } });
    expect(unknown.body.error).toEqual({
      error_code: 'repository_record_not_found',
      error_description: 'payment_form_config.session_id',
    });
  });

  it('the widget pays the session: approve_pending, approve, checkout_results; the token serves one operation', async () => {
    const id = await formSession();
    const token = (await sb.post('public_token', { payment_form_config: { session_id: id } })).body
      .public_token;
    const paid = await sb.plain('POST', '/sandbox/widgets/payment-form', { public_token: token, ...card() });
    expect(paid.body).toEqual({ status: 'ok', session_id: id, payment_id: expect.stringMatching(/^pm_/) });
    await waitForEvent(sb, id, 'approve_pending');
    await sb.post('transaction/approve', { session_id: id });
    const final = await sb.waitForSession(id, isFinal);
    expect(final.payments[0]).toMatchObject({
      transaction_status: 'successful',
      sum_info: RUB(4900),
      payment_info: { card_info: { card_last4: '1111' } },
    });
    expect(final.payments[0].recurring_token_info).toBeUndefined();
    const again = await sb.plain('POST', '/sandbox/widgets/payment-form', { public_token: token, ...card() });
    expect(again.body.error.error_description).toBe('public_token.already_used');
    const state = await sb.post('public_token/state', { type: 'public_token', public_token: { token } });
    expect(state.body.token_info).toMatchObject({
      type: 'public_token',
      token,
      token_active: false,
      used: true,
      session_id: id,
    });
    // A bare string is accepted as public_token too.
    const bare = await sb.post('public_token/state', { type: 'public_token', public_token: token });
    expect(bare.body.token_info.token).toBe(token);
  });

  it('the autopay consent (show_autopay_option) gives a recurring token', async () => {
    const id = await formSession();
    const token = (
      await sb.post('public_token', { payment_form_config: { session_id: id, show_autopay_option: true } })
    ).body.public_token;
    await sb.plain('POST', '/sandbox/widgets/payment-form', {
      public_token: token,
      ...card(),
      autopay: true,
    });
    await waitForEvent(sb, id, 'approve_pending');
    await sb.post('transaction/approve', { session_id: id });
    const final = await sb.waitForSession(id, isFinal);
    expect(final.payments[0].recurring_token_info.token).toMatch(/^rt_/);
    expect(final.payments[0].payment_settings.allow_recurring).toBe(true);
  });

  it('the widget HTML page posts a form; a 3-DS card then asks for action_pending', async () => {
    const id = await formSession({ payment_settings: { back_url: 'https://shop.example/done' } });
    const token = (await sb.post('public_token', { payment_form_config: { session_id: id } })).body
      .public_token;
    const page = await request(`${sb.url}/sandbox/widgets/payment-form?public_token=${token}`);
    const form = parseForm(await page.body.text());
    expect(form.fields.public_token).toBe(token);
    const submit = await request(new URL(form.action, sb.url).toString(), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...form.fields, ...card(CARDS.threeDs) }).toString(),
    });
    const html = await submit.body.text();
    expect(submit.statusCode).toBe(200);
    expect(html).not.toContain(CARDS.threeDs);
    await waitForEvent(sb, id, 'approve_pending');
    await sb.post('transaction/approve', { session_id: id });
    await waitForEvent(sb, id, 'action_pending');
    expect(await eventTypes(sb, id)).toEqual(['approve_pending', 'action_pending']);
  });

  it('the FPS page (fps_widget): one token per session; the page starts the FPS payment, QR after approval', async () => {
    const id = await formSession();
    const token = (await sb.post('public_token', { fps_widget: { session_id: id, lang: 'en' } })).body
      .public_token;
    expect(token).toMatch(/^pt_/);
    const second = await sb.post('public_token', { fps_widget: { session_id: id } });
    expect(second.body.error.error_description).toBe('fps_widget.session_id.not_unique');
    const started = await sb.plain('POST', '/sandbox/widgets/fps', { public_token: token });
    expect(started.body).toEqual({ status: 'ok', session_id: id, payment_id: expect.stringMatching(/^pm_/) });
    const paymentId = started.body.payment_id as string;
    // Before the partner approves, the page waits (and refreshes itself).
    const waiting = await sb.plain('GET', `/sandbox/widgets/fps/${paymentId}`);
    expect(waiting.text).toContain('id="waiting"');
    expect(waiting.text).toContain('http-equiv="refresh"');
    await waitForEvent(sb, id, 'approve_pending');
    await sb.post('transaction/approve', { session_id: id });
    const shown = await sb.waitForSession(id, (s) => !!s.payments?.[0]?.user_action);
    const qr = shown.payments[0].user_action.payment_qr.qr_data;
    const page = (await sb.plain('GET', `/sandbox/widgets/fps/${paymentId}`)).text;
    expect(page).toContain(`href="${qr.qr_content}"`);
    expect(page).toContain(`base64,${qr.qr_image}`);
    const again = await sb.plain('POST', '/sandbox/widgets/fps', { public_token: token });
    expect(again.body.error.error_description).toBe('public_token.already_used');
    // A session that already has an operation takes no FPS page.
    const other = await formSession();
    await sb.post('transaction/start/checkout', { session_id: other, payment_info: { type: 'fps_info' } });
    const busy = await sb.post('public_token', { fps_widget: { session_id: other } });
    expect(busy.body.error.error_description).toBe('fps_widget.session_id.already_started');
  });

  it('a token of the wrong widget is refused and not spent', async () => {
    const pt = (await sb.post('public_token', { card_tokenize: { allow_tokenization: true } })).body
      .public_token;
    const wrong = await sb.plain('POST', '/sandbox/widgets/payment-form', { public_token: pt, ...card() });
    expect(wrong.body.error.error_description).toBe('public_token.wrong_widget');
    const state = await sb.post('public_token/state', { type: 'public_token', public_token: { token: pt } });
    expect(state.body.token_info.token_active).toBe(true);
  });
});

describe('sandbox: public token lifetime of 24 h × timeScale', () => {
  let sb: TestSandbox;
  beforeAll(async () => {
    // 24 h × 0.00002 = 1.728 s
    sb = await startTestSandbox({ timeScale: 0.00002 });
  });
  afterAll(() => sb.close());

  it('expires', async () => {
    const id = (await sb.post('transaction/initiate', { sum_info: RUB(100), user_info: user() })).body
      .session_info.id;
    const token = (await sb.post('public_token', { payment_form_config: { session_id: id } })).body
      .public_token;
    const fresh = await sb.post('public_token/state', { type: 'public_token', public_token: { token } });
    expect(fresh.body.token_info.token_active).toBe(true);
    await new Promise((r) => setTimeout(r, 1900));
    const stale = await sb.post('public_token/state', { type: 'public_token', public_token: { token } });
    expect(stale.body.token_info.token_active).toBe(false);
    const use = await sb.plain('POST', '/sandbox/widgets/payment-form', {
      public_token: token,
      card_number: TEST_CARD.visa,
      card_exp_month: '1',
      card_exp_year: '30',
      card_code: '123',
    });
    expect(use.body.error).toEqual({
      error_code: 'invalid_request',
      error_description: 'public_token.expired',
    });
  });
});
