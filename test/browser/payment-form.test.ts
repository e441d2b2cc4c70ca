/**
 * A real browser plays the payer of a payment-form checkout (headless Chromium via playwright-core):
 * the checkout is created through the HTTP API with `show_autopay_option`, the browser opens the
 * sandbox's widget page with the `publicToken` of the answer, types a frictionless test card into the
 * fields, ticks the automatic-payments consent and submits; the page says the payment was accepted.
 * The session ends succeeded with a recurring token, and the sandbox ledger shows one charge (hold, then
 * capture of the whole amount).
 *
 * The card number is shown in clear in the widget's input, so the form is photographed before typing
 * and then the result page (test-results/screenshots/); no card number is asserted with a matcher that
 * would print the page. The stack is the one of test/helpers/browser.ts (`paysaga dev` in-process).
 */
import * as path from 'node:path';
import { FINAL_PHASES, SCREENSHOTS, startBrowserStack, type BrowserStack } from '../helpers/browser';
import { TEST_CARD } from '../../sandbox/test-cards';

const CARD = {
  card_number: TEST_CARD.visa,
  card_exp_month: '12',
  card_exp_year: '2030',
  card_code: '123',
};
const AMOUNT = 4_990;

/* eslint-disable @typescript-eslint/no-explicit-any -- API answers are read field by field */

let stack: BrowserStack | undefined;

/** Whether a text holds the card number (a boolean, so a failing expectation does not print the text). */
const holdsCard = (text: string) => text.includes(CARD.card_number);

beforeAll(async () => {
  stack = await startBrowserStack();
}, 150_000);

afterAll(async () => {
  await stack?.close();
}, 60_000);

describe('a payer in a real browser', () => {
  it('pays in the payment-form widget, gives the autopay consent, and the session succeeds with one charge', async () => {
    const { api, until, dev, browser } = stack!;
    const created = await api('POST', '/v1/checkouts?wait=10000', {
      method: 'payment_form',
      reference: `browser-form-${Date.now().toString(36)}`,
      customer: { user_id: 'browser-payer' },
      amount: { amount: AMOUNT, currency: 'RUB' },
      widget: { showAutopayOption: true },
    });
    const sessionId: string = created.sessionId;
    expect(created.kind).toBe('payment_form');
    const publicToken: string =
      created.publicToken ?? (await until(sessionId, (v) => !!v.publicToken)).publicToken;

    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    context.setDefaultTimeout(30_000);
    try {
      const page = await context.newPage();
      const widgetUrl = `${dev.sandboxUrl}/sandbox/widgets/payment-form?public_token=${encodeURIComponent(publicToken)}`;
      await page.goto(widgetUrl);
      await page.locator('input[name="card_number"]').waitFor();
      expect(await page.locator('input[name="autopay"]').isVisible()).toBe(true);
      await page.screenshot({ path: path.join(SCREENSHOTS, 'payment-form-widget.png') });

      // Typed key by key, as a person would.
      await page.click('input[name="card_number"]');
      await page.keyboard.type(CARD.card_number, { delay: 10 });
      await page.click('input[name="card_exp_month"]');
      await page.keyboard.type(CARD.card_exp_month);
      await page.fill('input[name="card_exp_year"]', CARD.card_exp_year);
      await page.fill('input[name="card_code"]', CARD.card_code);
      await page.check('input[name="autopay"]');
      const [response] = await Promise.all([
        page.waitForResponse(
          (r) => r.request().method() === 'POST' && r.url().endsWith('/sandbox/widgets/payment-form'),
        ),
        page.click('button[type="submit"]'),
      ]);
      await page.waitForLoadState();
      expect(response.status()).toBe(200);

      // The result page: the card number is not on it (checked before anything of it may be printed).
      expect(holdsCard(await page.content())).toBe(false);
      const result = (await page.textContent('body')) ?? '';
      expect(result).toMatch(/Payment \S+ accepted\./);
      await page.screenshot({ path: path.join(SCREENSHOTS, 'payment-form-result.png') });

      const done = await until(sessionId, (v) => FINAL_PHASES.includes(v.phase), 45_000);
      expect(holdsCard(JSON.stringify(done))).toBe(false);
      expect(done.phase).toBe('succeeded');
      expect(done.recurringToken).toMatch(/^rt_/);
      expect(done.operations).toHaveLength(1);
      expect(done.operations[0]).toMatchObject({ kind: 'payment', status: 'successful', amount: AMOUNT });

      // One charge at the provider: the whole amount held, then captured; nothing released or charged again.
      const res = await fetch(`${dev.sandboxUrl}/sandbox/ledger?session_id=${encodeURIComponent(sessionId)}`);
      expect(res.status).toBe(200);
      const ledger = (await res.json()) as { entries: any[] };
      expect(ledger.entries.map((e) => [e.kind, e.amount])).toEqual([
        ['hold', AMOUNT],
        ['capture', AMOUNT],
      ]);
    } finally {
      await context.close();
    }
  }, 90_000);
  it("pays through the provider's FPS page: the QR and the deep link to the bank app", async () => {
    const { api, until, dev, browser } = stack!;
    const created = await api('POST', '/v1/checkouts?wait=10000', {
      method: 'fps',
      reference: `browser-fps-${Date.now().toString(36)}`,
      customer: { user_id: 'browser-payer' },
      amount: { amount: 1_990, currency: 'RUB' },
      widget: { lang: 'en' },
    });
    const sessionId: string = created.sessionId;
    expect(created.kind).toBe('fps_payment');
    const publicToken: string =
      created.publicToken ?? (await until(sessionId, (v) => !!v.publicToken)).publicToken;

    const context = await browser.newContext({ viewport: { width: 900, height: 900 } });
    context.setDefaultTimeout(30_000);
    try {
      const page = await context.newPage();
      await page.goto(
        `${dev.sandboxUrl}/sandbox/widgets/fps?public_token=${encodeURIComponent(publicToken)}`,
      );
      await page.click('button[type="submit"]');
      // The page waits for the shop's approval (paysaga approves by its policy), then shows the QR.
      await page.locator('#qr').waitFor();
      expect(await page.getAttribute('#qr', 'src')).toMatch(/^data:image\/svg\+xml;base64,/);
      await page.screenshot({ path: path.join(SCREENSHOTS, 'fps-widget-qr.png') });
      // On a phone the payer follows the deep link to the bank app.
      await page.click('#deep-link');
      await page.fill('input[name="phone_number"]', '+79990001122');
      await page.click('button[type="submit"]');
      expect(await page.textContent('body')).toMatch(/Paid\./);

      const done = await until(sessionId, (v) => FINAL_PHASES.includes(v.phase), 45_000);
      expect(done.phase).toBe('succeeded');
      expect(done.operations).toEqual([
        expect.objectContaining({ kind: 'payment', status: 'successful', amount: 1_990 }),
      ]);
      const res = await fetch(`${dev.sandboxUrl}/sandbox/ledger?session_id=${encodeURIComponent(sessionId)}`);
      const ledger = (await res.json()) as { entries: any[] };
      expect(ledger.entries.map((e) => [e.kind, e.amount])).toEqual([['charge', 1_990]]);
    } finally {
      await context.close();
    }
  }, 90_000);
});
