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
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
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

/**
 * Waits (at most a minute) until the session's workflow is no longer running. Read from the execution's
 * status only: its payloads are encrypted with the dev stack's key, which this test does not hold.
 */
async function workflowClosed(connection: Connection, workflowId: string): Promise<boolean> {
  for (const deadline = Date.now() + 60_000; Date.now() < deadline;) {
    const { workflowExecutionInfo } = await connection.workflowService.describeWorkflowExecution({
      namespace: 'default',
      execution: { workflowId },
    });
    if (
      workflowExecutionInfo?.status !==
      temporal.api.enums.v1.WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING
    )
      return true;
    await new Promise((r) => setTimeout(r, 200));
  }
  return false;
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
  it("returns after the session's workflow closed: lands on the result, then on the partner's page", async () => {
    const connection = await Connection.connect({ address: stack!.dev.temporalAddress });
    const client = new Client({ connection });
    const context = await stack!.browser.newContext();
    // The partner's own page, on this machine.
    const partner = http.createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'text/html' }).end('<h1 id="partner">Thanks</h1>'),
    );
    await new Promise<void>((resolve) => partner.listen(0, '127.0.0.1', resolve));
    const partnerUrl = `http://127.0.0.1:${(partner.address() as AddressInfo).port}/thanks`;
    try {
      for (const partnerPage of [undefined, partnerUrl]) {
        const created = await api('POST', '/v1/checkouts?wait=10000', {
          method: 'card',
          reference: `browser-closed-${Date.now().toString(36)}`,
          customer: { user_id: 'browser-payer' },
          amount: { amount: 4_900, currency: 'RUB' },
          card: THREE_DS_CARD,
          // The workflow closes as soon as the result is in: the payer comes back to no open run.
          settings: { followMs: 0 },
          ...(partnerPage ? { backUrl: partnerPage } : {}),
        });
        const sessionId: string = created.sessionId;
        const waiting = created.userAction ? created : await until(sessionId, (v) => !!v.userAction);
        const backUrl: string = waiting.lastSnapshot.payments[0].payment_settings.back_url;
        const page = await context.newPage();
        // The issuer's form posts to paysaga's return page only once the workflow has closed (the
        // provider's webhook came first): held here until then.
        let closed = false;
        await page.route(`${stack!.dev.publicUrl}/return/**`, async (route) => {
          closed = await workflowClosed(connection, sessionId);
          await route.continue();
        });
        await openUserAction(page, waiting.userAction.destination_info);
        await page.fill('input[name="code"]', '12345');
        await page.click('button[type="submit"]');
        if (partnerPage) {
          await page.waitForURL((u) => u.toString().startsWith(partnerPage), { timeout: 60_000 });
          expect(new URL(page.url()).searchParams.get('session_id')).toBe(sessionId);
          expect(await page.textContent('#partner')).toBe('Thanks');
        } else {
          await page.waitForURL((u) => u.toString() === backUrl, { timeout: 60_000 });
          await page.waitForSelector('[data-outcome]');
          expect(await page.getAttribute('[data-outcome]', 'data-outcome')).toBe('success');
          expect(await page.textContent('#session-id')).toBe(sessionId);
          await page.screenshot({ path: path.join(SCREENSHOTS, 'three-ds-return-after-close.png') });
        }
        expect(closed).toBe(true);
        // Nothing was started by the return: the one run that closed is the session's only one.
        const runs: string[] = [];
        for await (const w of client.workflow.list({ query: `WorkflowId = '${sessionId}'` }))
          runs.push(w.runId);
        expect(runs).toHaveLength(1);
        await page.close();
      }
    } finally {
      await context.close();
      await connection.close();
      await new Promise((resolve) => partner.close(resolve));
    }
  });
});
