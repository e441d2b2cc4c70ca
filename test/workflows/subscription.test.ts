/**
 * Recurring billing end to end, on the real parts: the subscription workflow on a real worker and
 * Temporal dev server, each charge a real session against the sandbox over HTTP (its test behaviours
 * `loser` and `thief`, a disabled token, its fault injection for an outage), the store of record. Periods
 * are seconds long (the sandbox is the provider's test environment). What the five-year time-skipping test
 * (subscription-years.test.ts) proves with a stand-in, here with the provider: a worker down for several
 * periods and the catch-up after it, owed periods collected with the next charge, soft declines retried and
 * owed, a hard decline that waits for a new payment method, a provider that cannot be reached, a prorated
 * mid-period change. Each charge is checked against due dates computed here, and the sandbox ledger proves
 * what moved: one capture per paid period, nothing for a declined attempt.
 */
import { Worker } from '@temporalio/worker';
import {
  InputValidationError,
  ReferenceConflictError,
  SessionStateError,
  SubscriptionNotFoundError,
} from '../../client/errors';
import { EventsClient } from '../../client/events-client';
import { PaymentKind, PaymentStatus } from '../../common/search-attributes';
import type { ChargeRecord, SubscriptionView } from '../../common/views';
import { CardDetails } from '../../provider';
import { TEST_CARD } from '../../sandbox/test-cards';
import { finalView } from '../helpers/final';
import { startStack, type TestStack } from '../helpers/stack';
import { sharedWorkflowBundlePath } from '../helpers/temporal';

const customer = { user_id: 'subscriber' };
const loser = { user_id: 'subscriber', customer: { reference: 'loser' } };
const thief = { user_id: 'subscriber', customer: { reference: 'thief' } };
const rub = (amount: number) => ({ amount, currency: 'RUB' });
let n = 0;
const ref = (p: string) => `${p}-${Date.now()}-${++n}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A whole second at least `aheadMs` from now, as an ISO anchor in UTC. */
const anchorIn = (aheadMs: number) =>
  new Date(Math.ceil((Date.now() + aheadMs) / 1_000) * 1_000).toISOString();

describe('subscriptions against the sandbox', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ webhooks: true });
  });
  afterAll(async () => {
    await stack?.close();
  });

  /** A recurring token from a first card payment that asked for one. */
  async function newToken(): Promise<string> {
    const paid = await stack.payments.sessions.startCardCheckout({
      reference: ref('first'),
      amount: rub(100),
      card: new CardDetails({
        card_number: TEST_CARD.visa,
        card_exp_month: '12',
        card_exp_year: '30',
        card_code: '123',
      }),
      allowRecurring: true,
      customer,
    });
    const result = await finalView(stack.temporal, paid.sessionId);
    expect(result.recurringToken).toMatch(/^rt_/);
    return result.recurringToken as string;
  }

  async function until(
    id: string,
    predicate: (v: SubscriptionView) => boolean,
    timeoutMs = 60_000,
  ): Promise<SubscriptionView> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = await stack.payments.subscriptions.get(id);
      if (predicate(v)) return v;
      if (Date.now() > deadline)
        throw new Error(
          `timed out waiting for ${id}: ${JSON.stringify({ ...v, charges: v.charges.length })}`,
        );
      await sleep(200);
    }
  }

  /** What the sandbox moved for one charge session: capture or charge entries. */
  async function moved(sessionId: string): Promise<number[]> {
    const { entries } = await stack.sandbox.ledger(sessionId);
    return entries.filter((e) => e.kind === 'capture' || e.kind === 'charge').map((e) => e.amount);
  }

  /** The event types of a subscription as GET /v1/events lists them, once `done` holds. */
  async function eventTypes(subject: string, done: (types: string[]) => boolean): Promise<string[]> {
    const events = new EventsClient({ store: stack.store });
    const deadline = Date.now() + 30_000;
    for (;;) {
      const list = await events.listEvents({ subscription_id: subject, limit: 200 });
      const types = list.events.map((e) => e.type);
      expect(list.events.map((e) => e.sequence)).toEqual(types.map((_, i) => i + 1));
      if (done(types)) return types;
      if (Date.now() > deadline) throw new Error(`events of ${subject}: ${types.join(', ')}`);
      await sleep(200);
    }
  }

  /**
   * Money truth over a subscription's charges: one at a time, each reference once, each period paid at
   * most once, and the sandbox moved exactly the amount of each paid charge and nothing for the others.
   */
  async function moneyTruth(charges: ChargeRecord[]): Promise<void> {
    const byStart = [...charges].sort((x, y) => Date.parse(x.startedAt) - Date.parse(y.startedAt));
    for (let i = 1; i < byStart.length; i++)
      expect(Date.parse(byStart[i]!.startedAt)).toBeGreaterThanOrEqual(
        Date.parse(byStart[i - 1]!.finishedAt!),
      );
    expect(new Set(charges.map((c) => c.reference)).size).toBe(charges.length);
    const paid = charges.filter((c) => c.outcome === 'succeeded').map((c) => c.period);
    expect(new Set(paid).size).toBe(paid.length);
    for (const c of charges)
      expect([c.reference, await moved(c.sessionId)]).toEqual([
        c.reference,
        c.outcome === 'succeeded' ? [c.amount] : [],
      ]);
  }

  it('seconds-long periods through a worker outage: catch-up one, owed periods collected, a prorated change', async () => {
    const token = await newToken();
    const reference = ref('life');
    const PERIOD = 4_000;
    const anchor = anchorIn(3_000);
    const due = (k: number) => Date.parse(anchor) + (k - 1) * PERIOD;
    const request = {
      reference,
      token,
      amount: rub(1_000),
      schedule: { interval: 'second' as const, count: PERIOD / 1_000, anchor },
      endAfterPeriods: 8,
      policy: { spacingMs: 500, proration: 'next_invoice' as const },
      customer,
    };
    const started = await stack.payments.subscriptions.start(request);
    expect(started).toMatchObject({
      subscriptionId: `sub-${reference}`,
      status: 'active',
      created: true,
      // No zone named: UTC, and the answer says so.
      schedule: { interval: 'second', count: 4, anchor, timeZone: 'UTC' },
      nextDueDates: [1, 2, 3].map((k) => new Date(due(k)).toISOString()),
    });
    const id = started.subscriptionId;
    // The same request is the same subscription; another one under the reference is refused.
    expect((await stack.payments.subscriptions.start(request)).created).toBe(false);
    await expect(
      stack.payments.subscriptions.start({ ...request, amount: rub(9_999) }),
    ).rejects.toBeInstanceOf(ReferenceConflictError);

    // The worker is down from just after period 2 until well after period 5 fell due.
    await until(id, (v) => v.totals.succeeded >= 2, 30_000);
    await stack.stopWorker();
    await sleep(due(5) + 1_500 - Date.now());
    const restartedAt = Date.now();
    await stack.startWorker();

    // In the middle of period 7 the price doubles; what is left of the period is charged with period 8.
    await until(id, (v) => v.periods.some((p) => p.period === 7 && p.status === 'paid'), 60_000);
    await sleep(due(7) + PERIOD / 2 - Date.now());
    const before = Date.now();
    const changed = await stack.payments.subscriptions.change(id, { amount: 2_000 });
    const after = Date.now();
    expect(changed.credit).toBeGreaterThan(0);
    const v = (await stack.temporal.workflow.getHandle(id).result()) as SubscriptionView;

    // Every charge against the table: 1, 2 on their due dates; 3 and 4 missed while the worker was down
    // (owed), 5 charged when it came back, then 3 and 4 collected one at a time, 6 to 8 on their dates.
    // (Period 6 may fall due before or between the two collections on a slow machine: a period due is
    // charged first, never beside a collection.)
    const of = (kind: string) =>
      v.charges.filter((c) => c.kind === kind).map((c) => [c.period, c.attempt, c.outcome]);
    expect(of('due')).toEqual([1, 2, 5, 6, 7, 8].map((k) => [k, 0, 'succeeded']));
    expect(of('collect')).toEqual([3, 4].map((k) => [k, 0, 'succeeded']));
    expect(v.charges.slice(0, 3).map((c) => c.period)).toEqual([1, 2, 5]);
    for (const c of v.charges) {
      expect(c.dueAt).toBe(new Date(due(c.period)).toISOString());
      if (c.kind === 'due') expect(Date.parse(c.startedAt)).toBeGreaterThanOrEqual(due(c.period));
    }
    expect(Date.parse(v.charges[2]!.startedAt)).toBeGreaterThanOrEqual(restartedAt);
    // Collections spaced after the charge before them.
    v.charges.forEach((c, i) => {
      if (c.kind === 'collect')
        expect(Date.parse(c.startedAt)).toBeGreaterThanOrEqual(
          Date.parse(v.charges[i - 1]!.finishedAt!) + 500,
        );
    });
    // Period 8: the new price and the rest of period 7 at the difference, as the change's time allows.
    const period8 = v.periods.find((p) => p.period === 8)!;
    const rest = (t: number) => Math.round((1_000 * (due(8) - t)) / PERIOD);
    expect(period8.adjustment).toBeGreaterThanOrEqual(rest(after));
    expect(period8.adjustment).toBeLessThanOrEqual(rest(before));
    expect(period8.amount).toBe(2_000 + period8.adjustment!);
    expect(v).toMatchObject({
      status: 'ended',
      totals: { succeeded: 8, failed: 0, owedPeriods: 0, collectedPeriods: 2 },
    });
    await moneyTruth(v.charges);

    // The store keeps every period with its attempts; 3 and 4 say they were owed before they were paid.
    const { periods } = await stack.payments.subscriptions.periods(id);
    expect(periods.map((p) => [p.period, p.status, p.charges.length])).toEqual(
      [1, 2, 3, 4, 5, 6, 7, 8].map((k) => [k, 'paid', 1]),
    );
    expect(periods.filter((p) => p.owedSince).map((p) => p.period)).toEqual([3, 4]);
    const types = await eventTypes(id, (t) => t.includes('subscription.ended'));
    expect(types.filter((t) => t === 'subscription.period_owed')).toHaveLength(2);
    expect(types.filter((t) => t === 'subscription.period_collected')).toHaveLength(2);
    expect(types.filter((t) => t === 'subscription.charged')).toHaveLength(6);

    // Search attributes and the charges' own sessions.
    const described = await stack.temporal.workflow.getHandle(id).describe();
    expect(described.typedSearchAttributes.get(PaymentKind)).toBe('subscription');
    expect(described.typedSearchAttributes.get(PaymentStatus)).toBe('ended');
    const child = await stack.temporal.workflow.getHandle(v.charges[0]!.sessionId).describe();
    expect(child.typedSearchAttributes.get(PaymentKind)).toBe('recurring_payment');
    // One run per period (and per collection), and each replays, from the last back to the first.
    expect(v.runs).toBe(7); // 8 periods and 2 collections settled; 3 and 4 together; the last one ends
    let runs = 0;
    for (let runId: string | undefined = described.runId; runId; runs++) {
      const history = await stack.temporal.workflow.getHandle(id, runId).fetchHistory();
      await Worker.runReplayHistory({ workflowBundle: { codePath: sharedWorkflowBundlePath() } }, history);
      runId =
        history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
    }
    expect(runs).toBe(v.runs + 1);
  }, 150_000);

  it('soft declines (the sandbox loser): retried, then owed; the partner collects them with a new payer', async () => {
    const token = await newToken();
    const { subscriptionId: id } = await stack.payments.subscriptions.start({
      reference: ref('soft'),
      token,
      amount: rub(700),
      schedule: { interval: 'second', count: 3, anchor: anchorIn(2_000) },
      endAfterPeriods: 2,
      dunning: { retryDelaysMs: [400], onExhausted: 'continue' },
      policy: { owed: 'leave_open', spacingMs: 300 },
      customer: loser,
    });
    const owed = await until(id, (v) => v.status === 'ended' && v.totals.owedPeriods === 2);
    expect(owed.charges.map((c) => [c.period, c.attempt, c.outcome, c.declineClass])).toEqual([
      [1, 0, 'failed', 'soft'],
      [1, 1, 'failed', 'soft'],
      [2, 0, 'failed', 'soft'],
      [2, 1, 'failed', 'soft'],
    ]);
    for (const c of owed.charges)
      expect(c.reason).toEqual({ code: 'provider_error', providerCode: 'insufficient_funds' });
    // Nothing is forgotten: the store lists what is owed, with its attempts.
    const listed = await stack.payments.subscriptions.periods(id, { status: 'owed' });
    expect(listed.periods.map((p) => [p.period, p.attempts, p.charges.map((c) => c.declineClass)])).toEqual([
      [1, 2, ['soft', 'soft']],
      [2, 2, ['soft', 'soft']],
    ]);
    await expect(stack.payments.subscriptions.collect(id, { periods: [3] })).rejects.toThrow(
      SessionStateError,
    );
    await stack.payments.subscriptions.change(id, { customer });
    await stack.payments.subscriptions.collect(id);
    const v = (await stack.temporal.workflow.getHandle(id).result()) as SubscriptionView;
    expect(v.charges.slice(4).map((c) => [c.period, c.attempt, c.kind, c.outcome])).toEqual([
      [1, 2, 'collect', 'succeeded'],
      [2, 2, 'collect', 'succeeded'],
    ]);
    expect(v.totals).toMatchObject({ owedPeriods: 0, collectedPeriods: 2, chargedAmount: 1_400 });
    await moneyTruth(v.charges);
    expect(
      await eventTypes(id, (t) => t.filter((x) => x === 'subscription.period_collected').length === 2),
    ).toEqual([
      'subscription.created',
      'subscription.charge_failed',
      'subscription.charge_failed',
      'subscription.period_owed',
      'subscription.charge_failed',
      'subscription.charge_failed',
      'subscription.period_owed',
      'subscription.ended',
      'subscription.changed',
      'subscription.period_collected',
      'subscription.period_collected',
    ]);
  }, 90_000);

  it('a hard decline (the sandbox thief, a disabled token): no retry, past_due until a new payment method', async () => {
    const thiefToken = await newToken();
    const { subscriptionId: id } = await stack.payments.subscriptions.start({
      reference: ref('hard'),
      token: thiefToken,
      amount: rub(1_200),
      schedule: { interval: 'second', count: 2, anchor: anchorIn(2_000) },
      endAfterPeriods: 3,
      dunning: { retryDelaysMs: [300, 300] },
      policy: { spacingMs: 300 },
      customer: thief,
    });
    const stopped = await until(id, (v) => v.status === 'past_due');
    expect(stopped).toMatchObject({ paymentMethodRequired: true, totals: { owedPeriods: 1, attempts: 1 } });
    expect(stopped.charges[0]).toMatchObject({
      outcome: 'failed',
      declineClass: 'hard',
      reason: { providerCode: 'fraud_suspected' },
    });
    // The new token is disabled too: still hard, still past_due, nothing more tried until resumed.
    const disabled = await newToken();
    await stack.provider.recurringTokenDisable({ recurring_token_info: { token: disabled } });
    await stack.payments.subscriptions.change(id, { token: disabled, customer });
    await stack.payments.subscriptions.resume(id);
    const again = await until(id, (v) => v.status === 'past_due' && v.totals.attempts === 2);
    expect(again.charges[1]).toMatchObject({
      declineClass: 'hard',
      reason: { providerCode: 'recurring_token_inactive' },
    });
    expect(again.totals.owedPeriods).toBe(2);
    await sleep(1_500);
    expect((await stack.payments.subscriptions.get(id)).totals.attempts).toBe(2);
    // A good token: the next period is paid, then both owed periods are collected.
    await stack.payments.subscriptions.change(id, { token: await newToken() });
    await stack.payments.subscriptions.resume(id);
    const v = (await stack.temporal.workflow.getHandle(id).result()) as SubscriptionView;
    expect(v.charges.map((c) => [c.period, c.kind, c.outcome])).toEqual([
      [1, 'due', 'failed'],
      [2, 'due', 'failed'],
      [3, 'due', 'succeeded'],
      [1, 'collect', 'succeeded'],
      [2, 'collect', 'succeeded'],
    ]);
    expect(v).toMatchObject({ status: 'ended', totals: { owedPeriods: 0, collectedPeriods: 2 } });
    expect(v.paymentMethodRequired).toBeUndefined();
    await moneyTruth(v.charges);
    const types = await eventTypes(id, (t) => t.includes('subscription.ended'));
    expect(types.filter((t) => t === 'subscription.payment_method_required')).toHaveLength(2);
  }, 90_000);

  it('a provider that cannot be reached is never a decline: attention, then the period is charged once', async () => {
    const token = await newToken();
    const sessionsBefore = (await stack.sandbox.stats()).stats.sessions ?? 0;
    // The call that opens a charge's session fails for a while, as when the provider is down.
    const fault = await stack.sandbox.plain('POST', '/sandbox/faults', {
      // Longer than the activity's own attempts (about half a minute): the workflow sees the trouble.
      rules: [{ kind: 'error_5xx', status: 503, path: 'transaction/init/checkout', forMs: 40_000 }],
    });
    expect(fault.status).toBe(200);
    const { subscriptionId: id } = await stack.payments.subscriptions.start({
      reference: ref('down'),
      token,
      amount: rub(900),
      schedule: { interval: 'hour', count: 1 },
      customer,
      settings: { deadlines: { startMs: 1_000 } },
    });
    const troubled = await until(id, (v) => v.attention !== undefined);
    expect(troubled).toMatchObject({ status: 'active', attention: { code: 'charge_not_open' } });
    expect(troubled.totals).toMatchObject({ failed: 0, owedPeriods: 0 });
    const paid = await until(id, (v) => v.totals.succeeded === 1, 90_000);
    expect(paid.attention).toBeUndefined();
    expect(paid.charges).toHaveLength(1);
    expect((await stack.sandbox.stats()).stats.sessions).toBe(sessionsBefore + 1);
    await moneyTruth(paid.charges);
    expect(await eventTypes(id, (t) => t.includes('subscription.charged'))).toEqual([
      'subscription.created',
      'subscription.charged',
    ]);
    await stack.payments.subscriptions.cancel(id, 'test over');
  }, 150_000);

  it('cancel at the period end, pause with a resume date; bad input refused; unknown ids not found', async () => {
    const token = await newToken();
    const { subscriptionId: id } = await stack.payments.subscriptions.start({
      reference: ref('end'),
      token,
      amount: rub(400),
      schedule: { interval: 'second', count: 2, anchor: anchorIn(1_500) },
      customer,
    });
    await until(id, (v) => v.totals.succeeded >= 1);
    // A change the client refuses, and the workflow's own refusal of a period that has begun.
    await expect(stack.payments.subscriptions.change(id, { amount: -5 })).rejects.toThrow(
      InputValidationError,
    );
    await expect(stack.payments.subscriptions.change(id, { amount: 500, fromPeriod: 1 })).rejects.toThrow(
      SessionStateError,
    );
    const resumeAt = new Date(Date.now() + 3_000).toISOString();
    const paused = await stack.payments.subscriptions.pause(id, { resumeAt });
    expect(paused).toMatchObject({ status: 'paused', pausedUntil: resumeAt });
    await expect(stack.payments.subscriptions.pause(id)).rejects.toThrow(SessionStateError);
    await until(id, (v) => v.status === 'active');
    const scheduled = await stack.payments.subscriptions.cancel(id, { atPeriodEnd: true, reason: 'moving' });
    expect(scheduled).toMatchObject({ status: 'active', cancelation: { atPeriodEnd: true } });
    const v = (await stack.temporal.workflow.getHandle(id).result()) as SubscriptionView;
    expect(v).toMatchObject({
      status: 'canceled',
      cancelation: { atPeriodEnd: true, reason: { code: 'canceled_by_partner', detail: 'moving' } },
    });
    expect(Date.parse(v.cancelation!.effectiveAt!)).toBe(Date.parse(scheduled.cancelation!.effectiveAt!));
    expect(v.charges.every((c) => Date.parse(c.startedAt) < Date.parse(v.cancelation!.effectiveAt!))).toBe(
      true,
    );
    await moneyTruth(v.charges);
    const types = await eventTypes(id, (t) => t.includes('subscription.canceled'));
    expect(types.slice(-2)).toEqual(['subscription.cancel_scheduled', 'subscription.canceled']);
    expect(types).toContain('subscription.paused');
    expect(types).toContain('subscription.resumed');
    await expect(stack.payments.subscriptions.cancel(id)).rejects.toThrow(SessionStateError);
    await expect(stack.payments.subscriptions.get('sub-nope-never')).rejects.toThrow(
      SubscriptionNotFoundError,
    );
    await expect(stack.payments.subscriptions.get('ps_123')).rejects.toThrow(SubscriptionNotFoundError);
  }, 90_000);
});
