/**
 * Provider outages longer than every retry budget. Temporal's attempts of a
 * provider call last about half a minute (workflows/calls.ts); these outages last until the session has
 * shown it needs attention, then end, and the session must then end as the provider says, with money
 * moved exactly once. Each test runs on its own stack (the sandbox's faults are the stack's), the four
 * kinds that move money (checkout, payout, refund, hold) at the same time. Judged by the sandbox ledger and transaction/state.
 */
import type { Client } from '@temporalio/client';
import { NeedsAttention, PaymentStatus } from '../../common/search-attributes';
import type { SessionView, SubscriptionView } from '../../common/views';
import { finalView } from '../helpers/final';
import { startStack, type StackOptions, type TestStack } from '../helpers/stack';
import { card, FRICTIONLESS, references, rub } from '../helpers/workflow-test';
import { TEST_CARD } from '../../sandbox/test-cards';

// Past Temporal's ~31 s of attempts, the session's own backoff, and the recovery after the outage.
jest.setTimeout(150_000);

const ref = references('outage');

async function withStack<T>(opts: StackOptions, fn: (stack: TestStack) => Promise<T>): Promise<T> {
  const stack = await startStack(opts);
  try {
    return await fn(stack);
  } finally {
    await stack.close();
  }
}

async function setFaults(stack: TestStack, rules: object[]): Promise<void> {
  const res = await stack.sandbox.plain('POST', '/sandbox/faults', { rules });
  expect(res.status).toBe(200);
}

/** The provider answers again: every fault rule removed. */
async function recover(stack: TestStack): Promise<void> {
  expect((await stack.sandbox.plain('DELETE', '/sandbox/faults')).status).toBe(200);
}

/** Long polls the session until `pred` holds (a state, never a duration). */
async function until(
  stack: TestStack,
  id: string,
  pred: (v: SessionView) => boolean,
  ms = 120_000,
): Promise<SessionView> {
  const deadline = Date.now() + ms;
  let view = await stack.payments.sessions.get(id);
  while (!pred(view)) {
    if (Date.now() > deadline) throw new Error(`session ${id} never got there: ${JSON.stringify(view)}`);
    view = await stack.payments.sessions.waitForChange(id, {
      afterVersion: view.version,
      timeoutMs: Math.min(20_000, Math.max(1, deadline - Date.now())),
    });
  }
  return view;
}

async function attributes(temporal: Client, workflowId: string) {
  const d = await temporal.workflow.getHandle(workflowId).describe();
  return {
    status: d.typedSearchAttributes.get(PaymentStatus),
    attention: d.typedSearchAttributes.get(NeedsAttention),
  };
}

/** What the sandbox charged in a session (capture of a hold, or a direct charge). */
async function charged(stack: TestStack, id: string): Promise<number[]> {
  const { entries } = await stack.sandbox.ledger(id);
  return entries.filter((e) => e.kind === 'capture' || e.kind === 'charge').map((e) => e.amount);
}

async function moves(stack: TestStack, id: string): Promise<[string, number][]> {
  return (await stack.sandbox.ledger(id)).entries.map((e) => [e.kind, e.amount]);
}

/** transaction/state answers 503 for as long as the fault stays; the given webhooks are never sent. */
const outage = (...droppedEvents: string[]) => [
  { kind: 'error_5xx', status: 503, path: 'transaction/state' },
  ...droppedEvents.map((eventType) => ({ kind: 'webhook_drop', eventType })),
];

describe('exhausted retries never end a session while money can move', () => {
  // A provider down past every retry must not end a session whose payer may have paid: the session needs
  // attention and follows the provider until it answers.
  it.concurrent(
    'a card checkout: needs_attention (not final) while the charge is unknown; then succeeded, one hold and one capture',
    async () =>
      withStack({ webhooks: true }, async (stack) => {
        await setFaults(stack, outage('checkout_results'));
        const { sessionId: id } = await stack.payments.sessions.startCardCheckout({
          reference: ref('checkout'),
          amount: rub(5_300),
          card: card(FRICTIONLESS),
          customer: { user_id: 'u1' },
        });
        const troubled = await until(stack, id, (v) => v.phase === 'needs_attention' || v.final);
        expect(troubled).toMatchObject({ phase: 'needs_attention', final: false });
        expect(troubled.attention).toMatchObject({
          code: 'provider_call_failing',
          subject: 'transaction/state',
        });
        expect(await attributes(stack.temporal, id)).toEqual({ status: 'needs_attention', attention: true });
        // Meanwhile the provider has charged the payer: exactly what the session must not report failed.
        expect(await moves(stack, id)).toEqual([
          ['hold', 5_300],
          ['capture', 5_300],
        ]);

        await recover(stack);
        const result = await finalView(stack.temporal, id, 120_000);
        expect(result).toMatchObject({ phase: 'succeeded', final: true });
        expect(result.attention).toBeUndefined();
        expect(result.events.map((e) => e.type)).toEqual(
          expect.arrayContaining(['needs_attention', 'attention_cleared']),
        );
        expect(await attributes(stack.temporal, id)).toEqual({ status: 'succeeded', attention: false });
        expect(await moves(stack, id)).toEqual([
          ['hold', 5_300],
          ['capture', 5_300],
        ]);
      }),
  );

  it.concurrent(
    'a payout: needs_attention while its result is unknown; then succeeded, paid once',
    async () =>
      withStack({ webhooks: true }, async (stack) => {
        const pt = await stack.sandbox.post('public_token', { card_tokenize: { allow_tokenization: true } });
        const tokenized = await stack.sandbox.plain('POST', '/sandbox/widgets/card-tokenize', {
          public_token: pt.body.public_token,
          card_number: TEST_CARD.mastercard,
        });
        await setFaults(stack, outage('checkout_results'));
        const { sessionId: id } = await stack.payments.sessions.startPayout({
          reference: ref('payout'),
          amount: rub(2_900),
          destination: { type: 'tokenized_card', token: tokenized.body.card_token },
        });
        const troubled = await until(stack, id, (v) => v.phase === 'needs_attention' || v.final);
        expect(troubled).toMatchObject({ phase: 'needs_attention', final: false });
        expect(await attributes(stack.temporal, id)).toEqual({ status: 'needs_attention', attention: true });
        expect(await moves(stack, id)).toEqual([['payout', 2_900]]);

        await recover(stack);
        const result = await finalView(stack.temporal, id, 120_000);
        expect(result).toMatchObject({ phase: 'succeeded', final: true });
        expect(result.totals.paidOut).toBe(2_900);
        expect(await moves(stack, id)).toEqual([['payout', 2_900]]);
        expect((await stack.sandbox.stats()).stats.payouts).toBe(1);
      }),
  );

  it.concurrent(
    'a refund: the session shows attention while the refund is unknown; then the refund succeeds, refunded once',
    async () =>
      withStack({ webhooks: true }, async (stack) => {
        const { sessionId: id } = await stack.payments.sessions.startCardCheckout({
          reference: ref('paid'),
          amount: rub(7_000),
          card: card(FRICTIONLESS),
          customer: { user_id: 'u1' },
        });
        expect((await finalView(stack.temporal, id)).phase).toBe('succeeded');
        await setFaults(stack, outage('checkout_refunded'));
        const reference = ref('refund');
        await stack.payments.refunds.create(id, { reference, amount: 2_500 });
        const troubled = await until(stack, id, (v) => v.attention !== undefined);
        // The payment's result stays; the refund is what paysaga cannot follow yet.
        expect(troubled).toMatchObject({ phase: 'succeeded', final: true });
        expect(troubled.attention).toMatchObject({
          code: 'provider_call_failing',
          subject: 'transaction/state',
        });
        expect(troubled.refunds).toEqual([expect.objectContaining({ reference, status: 'processing' })]);
        expect((await attributes(stack.temporal, id)).attention).toBe(true);

        await recover(stack);
        const done = await until(stack, id, (v) => v.refunds[0]?.status !== 'processing');
        expect(done.refunds).toEqual([
          expect.objectContaining({ reference, amount: 2_500, status: 'succeeded' }),
        ]);
        expect(done.attention).toBeUndefined();
        expect(done.totals).toMatchObject({ captured: 7_000, refunded: 2_500 });
        expect(await moves(stack, id)).toEqual([
          ['hold', 7_000],
          ['capture', 7_000],
          ['refund', 2_500],
        ]);
        expect((await stack.sandbox.stats()).stats.moneyback).toBe(1);
      }),
  );

  // A deadline's cancel that cannot get through keeps trying: a hold is released, never left on the payer.
  it.concurrent(
    'a hold whose decision deadline passes while cancel answers 503: needs_attention, still held; then released and canceled',
    async () =>
      withStack({ webhooks: true, hold: true }, async (stack) => {
        // Only transaction/cancel is down: the hold is made, the deadline's cancel cannot get through.
        await setFaults(stack, [{ kind: 'error_5xx', status: 503, path: 'transaction/cancel' }]);
        const started = await stack.payments.sessions.startCardCheckout(
          {
            reference: ref('hold'),
            amount: rub(6_400),
            card: card(FRICTIONLESS),
            customer: { user_id: 'u1' },
            settings: { finalization: { mode: 'manual', deadlineMs: 2_000 } },
          },
          { waitMs: 15_000 },
        );
        const id = started.sessionId;
        const troubled = await until(stack, id, (v) => v.phase === 'needs_attention' || v.final);
        expect(troubled).toMatchObject({ phase: 'needs_attention', final: false });
        expect(troubled.attention).toMatchObject({
          code: 'provider_call_failing',
          subject: 'transaction/cancel',
        });
        expect(await attributes(stack.temporal, id)).toEqual({ status: 'needs_attention', attention: true });
        // The provider still holds the money: exactly what the session must not end on.
        expect(await moves(stack, id)).toEqual([['hold', 6_400]]);

        await recover(stack);
        const result = await finalView(stack.temporal, id, 120_000);
        expect(result).toMatchObject({
          phase: 'canceled',
          final: true,
          reason: { code: 'decision_deadline', detail: 'no finalize decision in time' },
        });
        expect(result.attention).toBeUndefined();
        expect(result.totals).toMatchObject({ held: 0, captured: 0 });
        expect(await moves(stack, id)).toEqual([
          ['hold', 6_400],
          ['release', 6_400],
        ]);
      }),
  );

  // A charge the provider has not decided yet is not a failed attempt: dunning must not charge the period
  // again.
  it.concurrent(
    "a subscription's charge whose result cannot be read: attention, not a failed attempt; then the period is charged once",
    async () =>
      withStack({ webhooks: true }, async (stack) => {
        const first = await stack.payments.sessions.startCardCheckout({
          reference: ref('sub-first'),
          amount: rub(100),
          card: card(FRICTIONLESS),
          allowRecurring: true,
          customer: { user_id: 'subscriber' },
        });
        const token = (await finalView(stack.temporal, first.sessionId)).recurringToken!;
        expect(token).toMatch(/^rt_/);
        await setFaults(stack, outage('checkout_results'));
        const { subscriptionId: id } = await stack.payments.subscriptions.start({
          reference: ref('sub'),
          token,
          amount: rub(1_100),
          // One period in this test: the next is an hour away. A dunning retry would come at once.
          schedule: { interval: 'hour' },
          customer: { user_id: 'subscriber' },
          dunning: { retryDelaysMs: [100], onExhausted: 'cancel' },
        });
        const untilSub = async (pred: (v: SubscriptionView) => boolean): Promise<SubscriptionView> => {
          const deadline = Date.now() + 120_000;
          for (;;) {
            const v = await stack.payments.subscriptions.get(id);
            if (pred(v)) return v;
            if (Date.now() > deadline) throw new Error(`subscription never got there: ${JSON.stringify(v)}`);
            await new Promise((r) => setTimeout(r, 200));
          }
        };
        const troubled = await untilSub((v) => v.attention !== undefined || v.totals.failed > 0);
        expect(troubled.status).toBe('active');
        expect(troubled.attention).toMatchObject({
          code: 'provider_call_failing',
          subject: troubled.charges.at(-1)?.sessionId,
        });
        expect(troubled.attention?.subject).toBeDefined();
        expect(troubled.totals).toMatchObject({ succeeded: 0, failed: 0 });
        expect(troubled.charges).toEqual([
          expect.objectContaining({ period: 1, attempt: 0, outcome: 'pending' }),
        ]);
        // The provider charged the payer meanwhile.
        const chargeSession = troubled.charges[0]!.sessionId;
        expect(await charged(stack, chargeSession)).toEqual([1_100]);

        await recover(stack);
        const paid = await untilSub((v) => v.totals.succeeded + v.totals.failed > 0);
        expect(paid).toMatchObject({ status: 'active' });
        expect(paid.attention).toBeUndefined();
        expect(paid.charges).toEqual([
          expect.objectContaining({ period: 1, attempt: 0, outcome: 'succeeded', amount: 1_100 }),
        ]);
        expect(await charged(stack, chargeSession)).toEqual([1_100]);
        await stack.payments.subscriptions.cancel(id);
      }),
  );
});

describe('a subscription survives a provider outage', () => {
  // An outage while a charge is opened delays the period; it never ends the subscription.
  it('the charge cannot be opened for a while: attention, still active; then the period is charged once', async () =>
    withStack({ webhooks: true }, async (stack) => {
      const first = await stack.payments.sessions.startCardCheckout({
        reference: ref('first'),
        amount: rub(100),
        card: card(FRICTIONLESS),
        allowRecurring: true,
        customer: { user_id: 'subscriber' },
      });
      const token = (await finalView(stack.temporal, first.sessionId)).recurringToken!;
      expect(token).toMatch(/^rt_/);
      const sessionsBefore = (await stack.sandbox.stats()).stats.sessions ?? 0;

      // The call that opens a charge's session (init/checkout, the session and its payment at once).
      await setFaults(stack, [{ kind: 'error_5xx', status: 503, path: 'transaction/init/checkout' }]);
      const sub = await stack.payments.subscriptions.start({
        reference: ref('sub'),
        token,
        amount: rub(1_000),
        // One period in this test: the next is an hour away.
        schedule: { interval: 'hour' },
        customer: { user_id: 'subscriber' },
        settings: { deadlines: { startMs: 2_000 } },
      });
      const id = sub.subscriptionId;
      const get = () => stack.payments.subscriptions.get(id);
      const untilSub = async (pred: (v: SubscriptionView) => boolean): Promise<SubscriptionView> => {
        const deadline = Date.now() + 90_000;
        for (;;) {
          const v = await get();
          if (pred(v)) return v;
          if (Date.now() > deadline) throw new Error(`subscription never got there: ${JSON.stringify(v)}`);
          await new Promise((r) => setTimeout(r, 200));
        }
      };

      const troubled = await untilSub((v) => v.attention !== undefined);
      expect(troubled.status).toBe('active');
      expect(troubled.attention).toMatchObject({ code: 'charge_not_open' });
      expect(troubled.totals).toMatchObject({ succeeded: 0, failed: 0 });
      expect(troubled.charges).toEqual([
        expect.objectContaining({ period: 1, attempt: 0, outcome: 'pending' }),
      ]);
      expect((await attributes(stack.temporal, id)).attention).toBe(true);
      expect((await stack.sandbox.stats()).stats.sessions).toBe(sessionsBefore);

      await recover(stack);
      const paid = await untilSub((v) => v.totals.succeeded === 1);
      expect(paid.status).toBe('active');
      expect(paid.attention).toBeUndefined();
      expect(paid.charges).toEqual([
        expect.objectContaining({ period: 1, attempt: 0, outcome: 'succeeded', amount: 1_000 }),
      ]);
      expect((await attributes(stack.temporal, id)).attention).toBe(false);
      const chargeSession = paid.charges[0]!.sessionId;
      const charged = (await stack.sandbox.ledger(chargeSession)).entries.filter(
        (e) => e.kind === 'capture' || e.kind === 'charge',
      );
      expect(charged.map((e) => e.amount)).toEqual([1_000]);
      // One provider session for the period, whatever was retried.
      expect((await stack.sandbox.stats()).stats.sessions).toBe(sessionsBefore + 1);
      await stack.payments.subscriptions.cancel(id);
    }));
});
