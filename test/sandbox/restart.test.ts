/*
 * The sandbox on a data folder (SQLite): stopped in the middle of every kind of flow and started again
 * on the same folder, it knows everything it knew and goes on. A hold is finalized, a partly refunded
 * payment refunded further (never beyond what was captured), tokens and card references keep working, an
 * idempotency key replays its stored answer, an open 3-D Secure challenge is passed, a QR that expired
 * while the sandbox was down expires at once, and webhooks that failed before the stop are delivered
 * after it. A sandbox SIGKILLed right after answering starts again on its folder too.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startSandbox } from '../../sandbox';
import { SANDBOX_STORE_FILE } from '../../sandbox/server';
import { SqliteStore } from '../../sandbox/sqlite-store';
import { generateTestKeys, type TestKeys } from '../helpers/keys';
import { completeThreeDs } from '../helpers/payer';
import { sandboxClient, startTestSandbox, type TestSandbox } from '../helpers/sandbox';
import { stateImage, storedImage } from '../helpers/sandbox-image';
import { startWebhookSink, type WebhookSink } from '../helpers/webhook-sink';
import { CARDS, cardPayment, fpsPayment, isFinal, RUB, user } from './fixtures';
import { checkoutApproved, state, waitForEvent } from './flow';

/* eslint-disable @typescript-eslint/no-explicit-any */

jest.setTimeout(120_000);

const ROOT = path.resolve(__dirname, '../..');
const TIME_SCALE = 0.01;
/** 4 s real: the QR comes due while the sandbox is down */
const QR_TTL_S = 400;
/** 10 min real: the 3-D Secure challenge stays open across the restart */
const THREE_DS_TTL_S = 60_000;
const IDEMPOTENCY_KEY = 'restart-payout-0001';

let keys: TestKeys;
let dataDir: string;
let sink: WebhookSink;

const open = (port?: number): Promise<TestSandbox> =>
  startTestSandbox({
    keys,
    dataDir,
    ...(port !== undefined ? { port } : {}),
    webhookUrl: sink.url,
    timeScale: TIME_SCALE,
    qrTtlSeconds: QR_TTL_S,
    // shop: holds, decisions by the partner; plain: approved by the service itself.
    projects: [
      { id: 'shop', hold: true },
      { id: 'plain', autoApprove: true },
    ],
    config: { threeDsTtlSeconds: THREE_DS_TTL_S },
  });

const SHOP = { projectId: 'shop' };
const PLAIN = { projectId: 'plain' };
const idNumber = (id: string) => Number(id.slice(id.indexOf('_') + 1));

beforeAll(async () => {
  keys = generateTestKeys();
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'paysaga-sandbox-restart-'));
  sink = await startWebhookSink();
});

afterAll(async () => {
  await sink.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('sandbox: stopped mid-flow and started again on the same data folder', () => {
  // What the first run left, read back in the second.
  const before: Record<string, any> = {};
  let first: TestSandbox;
  let second: TestSandbox;

  afterAll(async () => {
    await second?.close();
  });

  it('first run: every flow stopped midway; the file holds exactly what the sandbox knew', async () => {
    sink.respondWith(503); // the partner is down: every webhook waits for a redelivery
    first = await open();
    before.port = Number(new URL(first.url).port);

    // A hold waiting for the partner's finalize.
    before.held = await checkoutApproved(
      first,
      { payment_info: cardPayment(), sum_info: RUB(60_000), user_info: user() },
      SHOP,
    );
    await waitForEvent(first, before.held, 'finalization_pending');

    // A payment that obtained a recurring token, refunded in part.
    const paid = await first.post(
      'transaction/init/checkout',
      {
        payment_info: cardPayment(),
        sum_info: RUB(50_000),
        user_info: user(),
        payment_settings: { allow_recurring: true },
      },
      PLAIN,
    );
    before.refunded = paid.body.session_info.id;
    const done = await first.waitForSession(before.refunded, isFinal, PLAIN);
    before.recurringToken = done.payments[0].recurring_token_info.token;
    expect(
      (await first.post('transaction/refund', { session_id: before.refunded, sum_info: RUB(20_000) }, PLAIN))
        .status,
    ).toBe(200);
    await waitForEvent(first, before.refunded, 'checkout_refunded');

    // A card saved by the tokenization widget: hashed number and card token.
    const pt = (await first.post('public_token', { card_tokenize: { allow_tokenization: true } }, PLAIN)).body
      .public_token;
    const widget = await first.plain('POST', '/sandbox/widgets/card-tokenize', {
      public_token: pt,
      card_number: CARDS.frictionless,
      card_exp_month: '12',
      card_exp_year: '2030',
    });
    expect(widget.status).toBe(200);
    before.publicToken = pt;
    before.hashed = widget.body.hashed_card_details.hashed_card_number;
    before.cardToken = widget.body.card_token;

    // An answer stored under an idempotency key.
    before.payoutBody = {
      payout_info: { type: 'recurring_token_info', recurring_token_info: { token: before.recurringToken } },
      sum_info: RUB(7_000),
    };
    const payout = await first.post('transaction/init/transfer', before.payoutBody, {
      ...PLAIN,
      idempotencyKey: IDEMPOTENCY_KEY,
    });
    expect(payout.status).toBe(200);
    before.payoutAnswer = payout.body;

    // A 3-D Secure challenge waiting for the payer.
    const threeDs = await first.post(
      'transaction/init/checkout',
      {
        payment_info: cardPayment(CARDS.threeDs),
        sum_info: RUB(12_345),
        user_info: user(),
        payment_settings: { back_url: sink.url.replace('/webhooks', '/shop/return') },
      },
      PLAIN,
    );
    before.threeDs = threeDs.body.session_info.id;
    await waitForEvent(first, before.threeDs, 'action_pending');
    before.userAction = (await state(first, before.threeDs, 'plain')).payments[0].user_action;
    expect(before.userAction.destination_info.url_address).toContain(first.url);

    // An FPS QR shown to the payer, last, so its expiry is still ahead when the sandbox stops.
    before.qr = await checkoutApproved(
      first,
      { payment_info: fpsPayment(), sum_info: RUB(3_000), user_info: user() },
      SHOP,
    );
    await waitForEvent(first, before.qr, 'action_pending');

    before.heldView = await state(first, before.held, 'shop');
    before.refundedView = await state(first, before.refunded, 'plain');
    before.ledger = (await first.ledger()).entries;
    before.stats = (await first.stats()).stats;
    const qrView = await state(first, before.qr, 'shop');
    expect(qrView.payments[0].user_action.type).toBe('payment_qr'); // not expired yet
    await first.close();

    const live = stateImage(first.sandbox.state);
    const file = path.join(dataDir, SANDBOX_STORE_FILE);
    const { jobs, deliveries, ...stored } = storedImage(file);
    expect({ ...stored, nextIds: live.nextIds }).toEqual(live);
    expect(stored.nextIds).toEqual(live.nextIds);
    expect(jobs).toBeGreaterThanOrEqual(2); // the QR and 3-D Secure expiries at least
    expect(deliveries).toBeGreaterThan(0); // webhooks not delivered yet
    expect(live.sessions).toHaveLength(before.stats.sessions);

    // Wait while the sandbox is down until the QR's expiry has come due.
    const store = new SqliteStore(file);
    const qrJob = [...store.load().collections.jobs.values()].find(
      (j: any) => j.job.kind === 'payment_expiry' && j.job.action === 'qr',
    ) as { dueAtMs: number };
    store.close();
    expect(qrJob).toBeDefined();
    await new Promise((r) => setTimeout(r, Math.max(0, qrJob.dueAtMs - Date.now()) + 100));
  });

  it('second run: the same answers, and every flow goes on from where it stopped', async () => {
    sink.respondWith(200); // the partner is back
    second = await open(before.port);

    // The QR came due while the sandbox was down: it expires at once.
    const qr = await second.waitForSession(before.qr, isFinal, SHOP);
    expect(qr.transaction_status).toBe('canceled');
    expect(qr.payments[0].error.error_code).toBe('qr_expired');

    // The held payment reads exactly as before and is finalized in part.
    expect(await state(second, before.held, 'shop')).toEqual(before.heldView);
    expect(
      (await second.post('transaction/finalize', { session_id: before.held, sum_info: RUB(45_000) }, SHOP))
        .status,
    ).toBe(200);
    const held = await second.waitForSession(before.held, isFinal, SHOP);
    expect(held.transaction_status).toBe('completed');
    const heldLedger = (await second.ledger(before.held)).entries.map((e: any) => [e.kind, e.amount]);
    expect(heldLedger).toEqual([
      ['hold', 60_000],
      ['capture', 45_000],
      ['release', 15_000],
    ]);

    // The refund made before the stop counts: 30 000 are left, not 50 000.
    expect(await state(second, before.refunded, 'plain')).toEqual(before.refundedView);
    const tooMuch = await second.post(
      'transaction/refund',
      { session_id: before.refunded, sum_info: RUB(30_001) },
      PLAIN,
    );
    expect(tooMuch.body.error.error_description).toBe('sum_info.sum.exceeds_refundable_amount');
    expect(
      (await second.post('transaction/refund', { session_id: before.refunded, sum_info: RUB(30_000) }, PLAIN))
        .status,
    ).toBe(200);
    await waitForEvent(second, before.refunded, 'checkout_refunded', 2);
    const refundLedger = (await second.ledger(before.refunded)).totals;
    expect(refundLedger).toMatchObject({ hold: 50_000, capture: 50_000, refund: 50_000 });

    // The idempotency key replays its stored answer and creates nothing.
    const sessionsBefore = (await second.stats()).stats.sessions;
    const replay = await second.post('transaction/init/transfer', before.payoutBody, {
      ...PLAIN,
      idempotencyKey: IDEMPOTENCY_KEY,
    });
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual(before.payoutAnswer);
    const mismatch = await second.post(
      'transaction/init/transfer',
      { ...before.payoutBody, sum_info: RUB(7_001) },
      { ...PLAIN, idempotencyKey: IDEMPOTENCY_KEY },
    );
    expect(mismatch.body.error.error_code).toBe('idempotency_key_params_mismatch');
    expect((await second.stats()).stats.sessions).toBe(sessionsBefore);

    // Tokens and card references of the first run pay; the used public token stays used.
    const byRecurring = await second.post(
      'transaction/init/checkout',
      {
        payment_info: {
          type: 'recurring_token_info',
          recurring_token_info: { token: before.recurringToken, initiated_by: 'merchant' },
        },
        sum_info: RUB(1_500),
        user_info: user(),
      },
      PLAIN,
    );
    expect(
      (await second.waitForSession(byRecurring.body.session_info.id, isFinal, PLAIN)).transaction_status,
    ).toBe('completed');
    const byCardToken = await second.post(
      'transaction/init/transfer',
      {
        payout_info: {
          type: 'card_info',
          card_info: { type: 'tokenized_card', tokenized_card: { token: before.cardToken } },
        },
        sum_info: RUB(900),
      },
      PLAIN,
    );
    expect(
      (await second.waitForSession(byCardToken.body.session_info.id, isFinal, PLAIN)).transaction_status,
    ).toBe('completed');
    const hashed = await second.post(
      'public_token/state',
      {
        type: 'card_info',
        card_info: {
          type: 'hashed_card_details',
          hashed_card_details: { hashed_card_number: before.hashed },
        },
      },
      PLAIN,
    );
    expect(hashed.body.token_info).toMatchObject({ card_last4: '1111', card_network: 'visa' });
    const pt = await second.post(
      'public_token/state',
      { type: 'public_token', public_token: { token: before.publicToken } },
      PLAIN,
    );
    expect(pt.body.token_info).toMatchObject({ used: true, token_active: false });

    // The payer passes the 3-D Secure challenge opened before the stop.
    const passed = await completeThreeDs(before.userAction, '12345');
    expect(passed.status).toBe(200);
    expect(passed.html).toContain('/shop/return');
    const threeDs = await second.waitForSession(before.threeDs, isFinal, PLAIN);
    expect(threeDs.transaction_status).toBe('completed');
    expect((await second.ledger(before.threeDs)).entries.map((e: any) => [e.kind, e.amount])).toEqual([
      ['hold', 12_345],
      ['capture', 12_345],
    ]);

    // Webhooks that failed before the stop are delivered now, the same events (ids) as before.
    const deliveries = async () =>
      (await second.plain('GET', `/sandbox/webhooks?session_id=${before.held}`)).body.deliveries as any[];
    const deadline = Date.now() + 30_000;
    let log = await deliveries();
    const failedBefore = log.filter((d) => d.state === 'retrying').map((d) => d.eventId);
    expect(failedBefore.length).toBeGreaterThan(0);
    while (!failedBefore.every((id) => log.some((d) => d.eventId === id && d.state === 'delivered'))) {
      if (Date.now() > deadline) throw new Error(`not redelivered: ${JSON.stringify(log)}`);
      await new Promise((r) => setTimeout(r, 50));
      log = await deliveries();
    }
    expect(sink.ofSession(before.held).some((h) => h.body?.type === 'approve_pending')).toBe(true);

    // New ids continue above the first run's.
    const maxBefore = Math.max(...(before.ledger as any[]).map((e) => idNumber(e.sessionId)));
    expect(idNumber(byRecurring.body.session_info.id)).toBeGreaterThan(maxBefore);
  });

  it('a second sandbox on the same folder is refused while one runs', async () => {
    await expect(
      startSandbox(
        {
          serviceKey: keys.service.privatePem,
          projects: [{ id: 'shop', publicKey: keys.partner.publicPem }],
        },
        { dataDir },
      ),
    ).rejects.toThrow(
      new Error(
        `the sandbox store ${path.join(dataDir, SANDBOX_STORE_FILE)} is in use by process ${process.pid} (this one: close the other sandbox first)`,
      ),
    );
  });
});

describe('sandbox killed with SIGKILL (paysaga sandbox --data)', () => {
  it('the next start on its folder knows what it answered, and the projects it had', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paysaga-sandbox-kill-'));
    const config = path.join(keys.dir, 'kill.json');
    fs.writeFileSync(
      config,
      JSON.stringify({
        serviceKey: 'service_private.pem',
        projects: [
          { id: 'p_kill', publicKey: 'partner_public.pem', webhooks: false },
          { id: 'p_old', publicKey: 'partner_public.pem', webhooks: false },
        ],
        timeScale: TIME_SCALE,
      }),
    );
    const child = spawn(
      process.execPath,
      [path.join(ROOT, 'bin/paysaga.js'), 'sandbox', '--config', config, '--port', '0', '--data', dir],
      { cwd: keys.dir, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const exited = new Promise<NodeJS.Signals | null>((r) =>
      child.once('exit', (_code, signal) => r(signal)),
    );
    try {
      const deadline = Date.now() + 90_000;
      let m: RegExpExecArray | null;
      while (!(m = /sandbox listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out))) {
        if (Date.now() > deadline || child.exitCode !== null)
          throw new Error(`not listening: ${out}\n${err}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(out).toContain(`state: ${path.join(dir, SANDBOX_STORE_FILE)}`);
      const client = sandboxClient(m[1]!, keys, 'p_kill');
      const created = await client.post('transaction/initiate', { sum_info: RUB(4_200), user_info: user() });
      expect(created.status).toBe(200);
      const id: string = created.body.session_info.id;
      child.kill('SIGKILL'); // right after the answer: no shutdown, the VFS lock is left behind
      expect(await exited).toBe('SIGKILL');
      expect(fs.existsSync(path.join(dir, `${SANDBOX_STORE_FILE}.lock`))).toBe(true);

      // The config no longer names p_old: the folder still knows it.
      const again = await startTestSandbox({
        keys,
        dataDir: dir,
        projects: [{ id: 'p_kill', webhooks: false }],
      });
      try {
        expect((await again.plain('GET', '/sandbox/health')).body.projects.sort()).toEqual([
          'p_kill',
          'p_old',
        ]);
        const s = await state(again, id, 'p_kill');
        expect(s).toMatchObject({ id, transaction_status: 'created' });
        const old = await again.post(
          'transaction/initiate',
          { sum_info: RUB(1), user_info: user() },
          { projectId: 'p_old' },
        );
        expect(old.status).toBe(200);
      } finally {
        await again.close();
      }
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
