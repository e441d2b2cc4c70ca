/**
 * A real browser plays the payer of a 3-D Secure card checkout (headless Chromium via playwright-core):
 * the checkout is created through the HTTP API, the browser opens the issuer page from `userAction`
 * (by its http_method: a POST carrying the extra params), types 12345, submits, is sent back by the
 * issuer's auto-posted form to the back_url paysaga gave the provider for this session (the API's
 * public return page, signed for the session; the sandbox adds nothing to it), and sees "Payment
 * successful"; the session ends succeeded. Screenshots of the result page and of the Temporal UI showing that workflow (payloads
 * decoded through the API's codec endpoint) are saved under test-results/screenshots/.
 *
 * The stack is `paysaga dev` run in-process (runDev) on a temp data folder and free ports, with its own
 * Temporal dev server and UI; the worker uses the workflow bundle of the test run (test/helpers/browser.ts).
 */
import * as path from 'node:path';
import { Connection } from '@temporalio/client';
import type { Page } from 'playwright-core';
import { FINAL_PHASES, SCREENSHOTS, startBrowserStack, type BrowserStack } from '../helpers/browser';
import { TEST_CARD } from '../../sandbox/test-cards';

const THREE_DS_CARD = {
  card_number: TEST_CARD.visa3ds,
  card_exp_month: '12',
  card_exp_year: '30',
  card_code: '123',
};

jest.setTimeout(180_000);

/* eslint-disable @typescript-eslint/no-explicit-any -- API answers are read field by field */

let stack: BrowserStack | undefined;
const api = (...a: Parameters<BrowserStack['api']>) => stack!.api(...a);
const until = (...a: Parameters<BrowserStack['until']>) => stack!.until(...a);

const escapeAttr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

/** Navigates the way user_action says: a GET, or a POST of the extra params (as the partner's page would). */
async function openUserAction(page: Page, dest: any): Promise<void> {
  const params: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...dest.additional_params, ...dest.extra_params }))
    params[k] = String(v);
  if (dest.http_method !== 'POST') {
    const url = new URL(dest.url_address);
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    await page.goto(url.toString());
    return;
  }
  const inputs = Object.entries(params)
    .map(([k, v]) => `<input type="hidden" name="${escapeAttr(k)}" value="${escapeAttr(v)}">`)
    .join('');
  await page.setContent(
    `<form id="go" method="POST" action="${escapeAttr(dest.url_address)}">${inputs}</form>` +
      '<script>document.getElementById("go").submit()</script>',
  );
  await page.waitForURL((u) => u.toString().startsWith(dest.url_address));
}

beforeAll(async () => {
  stack = await startBrowserStack();
});

afterAll(async () => {
  await stack?.close();
});

describe('a payer in a real browser', () => {
  it('completes 3-D Secure, lands on the return page, and the session succeeds; the Temporal UI shows it', async () => {
    const reference = `browser-3ds-${Date.now().toString(36)}`;
    // No backUrl: paysaga gives the provider `<public listener>/return/<session id>?t=<token>`.
    const created = await api('POST', '/v1/checkouts?wait=10000', {
      method: 'card',
      reference,
      customer: { user_id: 'browser-payer' },
      amount: { amount: 129_900, currency: 'RUB' },
      card: THREE_DS_CARD,
    });
    const sessionId: string = created.sessionId;
    const waiting = created.userAction ? created : await until(sessionId, (v) => !!v.userAction);
    expect(waiting.phase).toBe('awaiting_payer');
    const backUrl: string = waiting.lastSnapshot.payments[0].payment_settings.back_url;
    expect(backUrl).toMatch(
      // The token: its expiry (epoch ms, base 36), a dot, the HMAC of the session id and that expiry.
      new RegExp(`^${stack!.dev.publicUrl}/return/${sessionId}\\?t=[0-9a-z]{1,12}\\.[A-Za-z0-9_-]{43}$`),
    );
    const dest = waiting.userAction.destination_info;
    expect(dest.url_address).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/sandbox\/3ds\//);

    const context = await stack!.browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const page = await context.newPage();
      await openUserAction(page, dest);
      await page.locator('input[name="code"]').waitFor();
      await page.screenshot({ path: path.join(SCREENSHOTS, 'three-ds-page.png') });
      await page.fill('input[name="code"]', '12345');
      await Promise.all([
        // The issuer's auto-posted form takes the payer to exactly the signed back_url.
        page.waitForURL((u) => u.toString() === backUrl, { timeout: 30_000 }),
        page.click('button[type="submit"]'),
      ]);
      await page.waitForSelector('[data-outcome]');
      let outcome = await page.getAttribute('[data-outcome]', 'data-outcome');
      if (outcome === 'processing') {
        // The page waits briefly for the bank; when it is slower, the payer sees the final page on reload.
        await until(sessionId, (v) => FINAL_PHASES.includes(v.phase));
        await page.goto(backUrl);
        outcome = await page.getAttribute('[data-outcome]', 'data-outcome');
      }
      expect(outcome).toBe('success');
      expect(await page.textContent('h1')).toBe('Payment successful');
      expect(await page.textContent('#session-id')).toBe(sessionId);
      const html = await page.content();
      expect(html).not.toContain(THREE_DS_CARD.card_number);
      await page.screenshot({ path: path.join(SCREENSHOTS, 'three-ds-result.png') });

      const done = await until(sessionId, (v) => FINAL_PHASES.includes(v.phase));
      expect(done.phase).toBe('succeeded');
      expect(done.events.some((e: any) => e.source === 'payer')).toBe(true);

      // What Temporal stores is encrypted (the dev stack's codec key): read without the codec, the
      // workflow input is an opaque binary/encrypted payload.
      const connection = await Connection.connect({ address: stack!.dev.temporalAddress });
      try {
        const history = await connection.workflowService.getWorkflowExecutionHistory({
          namespace: 'default',
          execution: { workflowId: sessionId },
        });
        const input =
          history.history?.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
        expect(Buffer.from(input?.metadata?.encoding ?? []).toString()).toBe('binary/encrypted');
        expect(Buffer.from(input?.data ?? []).toString('latin1')).not.toContain(reference);
      } finally {
        await connection.close();
      }

      // The Temporal UI of the dev stack shows the workflow (id = session id), completed, with its
      // input decoded through the API's codec endpoint (payloads are encrypted at rest).
      const ui = await context.newPage();
      await ui.goto(`${stack!.dev.uiUrl}/namespaces/default/workflows/${sessionId}`);
      await ui.getByText(sessionId, { exact: true }).first().waitFor({ timeout: 30_000 });
      await ui
        // Running while it follows the session after its result, Completed once it closes.
        .getByText(/running|completed/i)
        .first()
        .waitFor({ timeout: 30_000 });
      await ui.getByText('"card_checkout"').first().waitFor({ timeout: 30_000 });
      await ui.waitForLoadState('networkidle').catch(() => undefined);
      await ui.screenshot({ path: path.join(SCREENSHOTS, 'temporal-ui-workflow.png') });
    } finally {
      await context.close();
    }
  });
});
