/**
 * Records one workflow history per session kind into test/fixtures/histories/<kind>.json, for
 * test/workflows/replay.test.ts. Skipped unless RECORD_HISTORIES=1:
 *
 *   RECORD_HISTORIES=1 npx jest test/workflows/record-histories.test.ts     (or: node scripts/record-histories.js)
 *
 * Re-record (and commit the files) only when a workflow change is meant to be incompatible with
 * running sessions; otherwise the replay test is what catches the change. Each kind is its own test,
 * so a kind that does not work yet does not stop the others (its old file, if any, stays).
 */
import type { temporal } from '@temporalio/proto';
import { CardDetails } from '../../provider';
import type { SessionState } from '../../common/session-input';
import { sessionViewOf } from '../../common/session-view';
import { ensureReconciler } from '../../client/reconciler';
import { writeHistory } from '../fixtures/histories/io';
import { startFpsPayoutBatch } from '../helpers/workflow-test';
import { completeThreeDs, payFpsQr } from '../helpers/payer';
import { startStack, type TestStack } from '../helpers/stack';
import { TEST_CARD } from '../../sandbox/test-cards';

const RECORD = process.env.RECORD_HISTORIES === '1';
const card = (pan: string) =>
  new CardDetails({ card_number: pan, card_exp_month: '12', card_exp_year: '30', card_code: '123' });
const rub = (amount: number) => ({ amount, currency: 'RUB' });
let n = 0;
const ref = (p: string) => `rec-${p}-${Date.now()}-${++n}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

jest.setTimeout(90_000);

(RECORD ? describe : describe.skip)('record workflow histories', () => {
  let stack: TestStack;
  let holdStack: TestStack;
  beforeAll(async () => {
    // Sessions' workflows follow them for half a second after their result, then close: each history
    // is recorded whole.
    stack = await startStack({ webhooks: true, settings: { followMs: 500 } });
    holdStack = await startStack({ webhooks: true, hold: true, settings: { followMs: 500 } });
  });
  afterAll(async () => {
    await stack?.close();
    await holdStack?.close();
  });

  /** Waits for the run to close and writes its history (the latest run unless `runId`). */
  async function record(s: TestStack, kind: string, sessionId: string, runId?: string) {
    const handle = s.temporal.workflow.getHandle(sessionId, runId);
    const result = sessionViewOf((await handle.result()) as SessionState);
    const history = await handle.fetchHistory();
    const file = writeHistory(kind, sessionId, history as temporal.api.history.v1.IHistory);
    process.stderr.write(`recorded ${kind}: ${result.phase} -> ${file}\n`);
    return result;
  }

  async function cardPayment(s: TestStack, amount: number, allowRecurring = false) {
    const started = await s.payments.sessions.startCardCheckout({
      reference: ref('card'),
      amount: rub(amount),
      card: card(TEST_CARD.visa),
      customer: { user_id: 'u1' },
      ...(allowRecurring ? { allowRecurring } : {}),
    });
    return started.sessionId;
  }

  it('card checkout (webhooks on)', async () => {
    const id = await cardPayment(stack, 1_000);
    expect((await record(stack, 'card_checkout', id)).phase).toBe('succeeded');
  });

  it('card checkout, polling only (webhooks off), manual approval by Update', async () => {
    const off = await startStack({ webhooks: false, settings: { followMs: 500 } });
    try {
      const started = await off.payments.sessions.startCardCheckout(
        {
          reference: ref('card-poll'),
          amount: rub(1_100),
          card: card(TEST_CARD.visa),
          customer: { user_id: 'u1' },
          settings: { approval: { mode: 'manual', deadlineMs: 30_000 } },
        },
        { waitMs: 15_000 },
      );
      await off.payments.sessions.approve(started.sessionId);
      expect((await record(off, 'card_checkout_polling', started.sessionId)).phase).toBe('succeeded');
    } finally {
      await off.close();
    }
  });

  it('3-DS checkout', async () => {
    const started = await stack.payments.sessions.startCardCheckout(
      {
        reference: ref('3ds'),
        amount: rub(2_000),
        card: card(TEST_CARD.visa3ds),
        customer: { user_id: 'u1' },
        backUrl: 'https://shop.example/return',
      },
      { waitMs: 15_000 },
    );
    await completeThreeDs(started.userAction, '12345');
    await stack.payments.sessions.notifyPayerReturned(started.sessionId);
    expect((await record(stack, 'three_ds_checkout', started.sessionId)).phase).toBe('succeeded');
  });

  it('hold with a partial finalize (manual, by Update)', async () => {
    const started = await holdStack.payments.sessions.startCardCheckout(
      {
        reference: ref('hold'),
        amount: rub(5_000),
        card: card(TEST_CARD.visa),
        customer: { user_id: 'u1' },
        settings: { finalization: { mode: 'manual', deadlineMs: 30_000 } },
      },
      { waitMs: 15_000 },
    );
    expect(started.phase).toBe('awaiting_finalization');
    await holdStack.payments.sessions.finalize(started.sessionId, 3_000);
    expect((await record(holdStack, 'hold_partial_finalize', started.sessionId)).phase).toBe('succeeded');
  });

  it('FPS payment', async () => {
    const started = await stack.payments.sessions.startFpsPayment(
      { reference: ref('fps'), amount: rub(2_500), customer: { user_id: 'u1' } },
      { waitMs: 15_000 },
    );
    expect(started.phase).toBe('awaiting_payer');
    expect(await payFpsQr(stack.sandbox.url, started.operations[0]!.id)).toBe(200);
    expect((await record(stack, 'fps_payment', started.sessionId)).phase).toBe('succeeded');
  });

  it('FPS binding', async () => {
    const started = await stack.payments.sessions.startFpsBinding(
      { reference: ref('bind'), customer: { user_id: 'u1' } },
      { waitMs: 15_000 },
    );
    expect(started.phase).toBe('awaiting_payer');
    expect(await payFpsQr(stack.sandbox.url, started.operations[0]!.id)).toBe(200);
    expect((await record(stack, 'fps_binding', started.sessionId)).phase).toBe('succeeded');
  });

  it('payment form', async () => {
    const started = await stack.payments.sessions.startPaymentForm(
      { reference: ref('form'), amount: rub(1_500), customer: { user_id: 'u1' } },
      { waitMs: 15_000 },
    );
    expect(started.publicToken).toMatch(/^pt_/);
    const paid = await stack.sandbox.plain('POST', '/sandbox/widgets/payment-form', {
      public_token: started.publicToken,
      card_number: TEST_CARD.visa,
      card_exp_month: '12',
      card_exp_year: '2030',
      card_code: '123',
    });
    expect(paid.body.status).toBe('ok');
    expect((await record(stack, 'payment_form', started.sessionId)).phase).toBe('succeeded');
  });

  it('recurring payment (MIT by token)', async () => {
    const first = await cardPayment(stack, 900, true);
    const paid = sessionViewOf((await stack.temporal.workflow.getHandle(first).result()) as SessionState);
    expect(paid.recurringToken).toMatch(/^rt_/);
    const started = await stack.payments.sessions.startRecurringPayment({
      reference: ref('mit'),
      amount: rub(900),
      token: paid.recurringToken!,
      customer: { user_id: 'u1' },
    });
    expect((await record(stack, 'recurring_payment', started.sessionId)).phase).toBe('succeeded');
  });

  it('subscription (recurring billing: a period of its own run, with a prorated change during it)', async () => {
    const first = await cardPayment(stack, 100, true);
    const paid = sessionViewOf((await stack.temporal.workflow.getHandle(first).result()) as SessionState);
    const started = await stack.payments.subscriptions.start({
      reference: ref('sub'),
      token: paid.recurringToken!,
      amount: rub(300),
      schedule: { interval: 'second', count: 2 },
      policy: { proration: 'next_invoice' },
      customer: { user_id: 'subscriber' },
    });
    const id = started.subscriptionId;
    const charged = async (n: number) => {
      const deadline = Date.now() + 30_000;
      while ((await stack.payments.subscriptions.get(id)).totals.succeeded < n) {
        if (Date.now() > deadline) throw new Error(`the subscription did not charge ${n} times`);
        await sleep(200);
      }
    };
    await charged(1);
    await stack.payments.subscriptions.change(id, { amount: 400 });
    await charged(2);
    await stack.payments.subscriptions.cancel(id);
    await stack.temporal.workflow.getHandle(id).result();
    // Each period is a run: the one that took the change, charged its period and continued as new.
    const runs: temporal.api.history.v1.IHistory[] = [];
    for (
      let runId: string | undefined = (await stack.temporal.workflow.getHandle(id).describe()).runId;
      runId;
    ) {
      const history = (await stack.temporal.workflow
        .getHandle(id, runId)
        .fetchHistory()) as temporal.api.history.v1.IHistory;
      runs.push(history);
      runId =
        history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
    }
    const has = (h: temporal.api.history.v1.IHistory, attributes: string) =>
      (h.events ?? []).some((e) => (e as Record<string, unknown>)[attributes]);
    const run = runs.find(
      (h) =>
        has(h, 'workflowExecutionUpdateAcceptedEventAttributes') &&
        has(h, 'workflowExecutionContinuedAsNewEventAttributes') &&
        has(h, 'workflowExecutionSignaledEventAttributes'),
    );
    if (!run) throw new Error('no run took the change and charged its period');
    const file = writeHistory('subscription', id, run);
    process.stderr.write(`recorded subscription -> ${file}\n`);
  });

  it('payout (raw card, sent by the starter)', async () => {
    const started = await stack.payments.sessions.startPayout({
      reference: ref('payout'),
      amount: rub(3_000),
      destination: { type: 'card', card: card(TEST_CARD.mastercard) },
    });
    expect((await record(stack, 'payout', started.sessionId)).phase).toBe('succeeded');
  });

  it('payout by token (start/transfer sent by the workflow)', async () => {
    const pt = await stack.sandbox.post('public_token', { card_tokenize: { allow_tokenization: true } });
    const widget = await stack.sandbox.plain('POST', '/sandbox/widgets/card-tokenize', {
      public_token: pt.body.public_token,
      card_number: TEST_CARD.visa,
    });
    const started = await stack.payments.sessions.startPayout({
      reference: ref('payout-ct'),
      amount: rub(800),
      destination: { type: 'tokenized_card', token: widget.body.card_token },
    });
    expect((await record(stack, 'payout_token', started.sessionId)).phase).toBe('succeeded');
  });

  it('several payouts in one session (a batch of two to an FPS account)', async () => {
    const started = await startFpsPayoutBatch(stack, ref('batch'), [400, 500]);
    expect((await record(stack, 'payout_batch', started.sessionId)).phase).toBe('succeeded');
  });

  it('the reconciler (one pass over the sessions recorded above, then the next run)', async () => {
    const workflowId = await ensureReconciler(stack.temporal, stack.taskQueue, {
      everyMs: 500,
      windowMs: 60 * 60_000,
      pageSize: 50,
    });
    const handle = stack.temporal.workflow.getHandle(workflowId);
    const first = (await handle.describe()).runId;
    const deadline = Date.now() + 30_000;
    while ((await handle.describe()).runId === first) {
      if (Date.now() > deadline) throw new Error('the reconciler did not finish a pass');
      await sleep(200);
    }
    const history = await stack.temporal.workflow.getHandle(workflowId, first).fetchHistory();
    const file = writeHistory('reconciler', workflowId, history as temporal.api.history.v1.IHistory);
    process.stderr.write(`recorded reconciler -> ${file}\n`);
    await handle.terminate();
  });

  it('identity check', async () => {
    const banks = (await stack.sandbox.get('sbp/banks')).body.banks as { id: string }[];
    const reference = ref('idc');
    const started = await stack.payments.identityChecks.start({
      reference,
      phone: '+79991112233',
      bankId: banks[0]!.id,
      payee: { given_name: 'Ivan', family_name: 'Ivanov' },
    });
    expect((await record(stack, 'identity_check', started.sessionId)).phase).toBe('succeeded');
  });

  it('refund after the workflow closed (a new run), then a chargeback (another run)', async () => {
    const id = await cardPayment(stack, 6_000);
    await stack.temporal.workflow.getHandle(id).result();
    await stack.payments.refunds.create(id, { reference: ref('rf'), amount: 2_000 });
    const refunded = await record(stack, 'refund', id);
    expect(refunded.refunds).toEqual([expect.objectContaining({ amount: 2_000, status: 'succeeded' })]);
    const refundRun = (await stack.temporal.workflow.getHandle(id).describe()).runId;
    await stack.sandbox.plain('POST', '/sandbox/chargebacks', {
      session_id: id,
      sum_info: { sum: 1_000, currency_code: 'rub' },
    });
    const deadline = Date.now() + 15_000;
    while ((await stack.temporal.workflow.getHandle(id).describe()).runId === refundRun) {
      if (Date.now() > deadline) throw new Error('no late-event run');
      await sleep(100);
    }
    const late = await record(stack, 'late_event', id);
    expect(late).toMatchObject({ phase: 'succeeded', totals: { chargedBack: 1_000, refunded: 2_000 } });
  });
});
