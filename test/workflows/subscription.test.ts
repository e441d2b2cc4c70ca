/**
 * Recurring billing end to end: the subscription workflow on a real worker against the sandbox, with
 * a recurring token from a first card payment. Periods are 1.5 s; dunning delays are fractions of a
 * second. The sandbox ledger proves what moved: one capture/charge per paid period session.
 */
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import {
  InputValidationError,
  ReferenceConflictError,
  SessionStateError,
  SubscriptionNotFoundError,
} from '../../client/errors';
import { failureOf } from '../../common/failures';
import { CardDetails } from '../../provider';
import { PaymentKind, PaymentStatus } from '../../common/search-attributes';
import { changeSubscriptionUpdate } from '../../common/messages';
import type { SubscriptionView } from '../../common/views';
import { startStack, type TestStack } from '../helpers/stack';
import { sharedWorkflowBundlePath } from '../helpers/temporal';
import { finalView } from '../helpers/final';
import { EventsClient } from '../../client/events-client';
import { TEST_CARD } from '../../sandbox/test-cards';

const INTERVAL = 1_500;
const customer = { user_id: 'subscriber' };
const rub = (amount: number) => ({ amount, currency: 'RUB' });
let n = 0;
const ref = (p: string) => `${p}-${Date.now()}-${++n}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('subscriptions', () => {
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
      customer: { user_id: 'subscriber' },
    });
    const result = await finalView(stack.temporal, paid.sessionId);
    expect(result.recurringToken).toMatch(/^rt_/);
    return result.recurringToken as string;
  }

  async function until(
    id: string,
    predicate: (v: SubscriptionView) => boolean,
    timeoutMs = 30_000,
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
  async function moved(sessionId: string) {
    const { entries } = await stack.sandbox.ledger(sessionId);
    return entries.filter((e) => e.kind === 'capture' || e.kind === 'charge');
  }

  const settled = (v: SubscriptionView) => v.charges.every((c) => c.outcome !== 'pending');

  /**
   * The event types of a subject (as GET /v1/events lists them), once `done` holds: events are
   * published without the workflow waiting, so they show up a moment after the change.
   */
  async function eventTypes(subject: string, done: (types: string[]) => boolean): Promise<string[]> {
    const events = new EventsClient({ store: stack.store });
    const key = subject.startsWith('sub-') ? 'subscription_id' : 'session_id';
    const deadline = Date.now() + 30_000;
    for (;;) {
      const list = await events.listEvents({ [key]: subject, limit: 200 });
      const types = list.events.map((e) => e.type);
      expect(list.events.map((e) => e.sequence)).toEqual(types.map((_, i) => i + 1));
      if (done(types)) return types;
      if (Date.now() > deadline) throw new Error(`events of ${subject}: ${types.join(', ')}`);
      await sleep(200);
    }
  }
  /** Consecutive repeats as one: [a, a, b] -> [a, b]. */
  const collapsed = (types: string[]) => types.filter((t, i) => t !== types[i - 1]);

  it('charges three periods once each, one session per period; the same reference is the same subscription', async () => {
    const token = await newToken();
    const reference = ref('three');
    const t0 = Date.now();
    const started = await stack.payments.subscriptions.start({
      reference,
      token,
      amount: rub(1_000),
      intervalMs: INTERVAL,
      customer,
    });
    expect(started.subscriptionId).toBe(`sub-${reference}`);
    expect(started.status).toBe('active');
    expect(started.created).toBe(true);
    const again = await stack.payments.subscriptions.start({
      reference,
      token,
      amount: rub(1_000),
      intervalMs: INTERVAL,
      customer,
    });
    expect(again.subscriptionId).toBe(started.subscriptionId);
    expect(again.created).toBe(false);
    // Another request under the same reference is refused, naming the reference
    // (docs/decisions/011-paysaga-owns-its-references.md).
    await expect(
      stack.payments.subscriptions.start({
        reference,
        token,
        amount: rub(9_999),
        intervalMs: 60_000,
        customer,
      }),
    ).rejects.toBeInstanceOf(ReferenceConflictError);

    const v = await until(started.subscriptionId, (s) => s.totals.succeeded >= 3);
    const done = await stack.payments.subscriptions.cancel(started.subscriptionId);
    expect(done.status).toBe('canceled');
    const final = await until(started.subscriptionId, settled);

    const paid = final.charges.filter((c) => c.outcome === 'succeeded');
    expect(paid.length).toBeGreaterThanOrEqual(3);
    expect(paid.slice(0, 3).map((c) => c.period)).toEqual([1, 2, 3]);
    expect(new Set(final.charges.map((c) => c.sessionId)).size).toBe(final.charges.length);
    for (const c of paid) {
      const m = await moved(c.sessionId);
      expect(m).toHaveLength(1);
      expect(m[0]).toMatchObject({ amount: 1_000, currency: 'rub' });
    }
    // The periods follow the schedule: period k is due k intervals after the start (the workflow
    // started after t0), and a charge starts only once due (startedAt is taken after the session
    // was initiated, so it can be late under load, never early).
    const starts = paid.slice(0, 3).map((c) => Date.parse(c.startedAt));
    starts.forEach((at, k) => expect(at).toBeGreaterThanOrEqual(t0 + k * INTERVAL));
    expect(starts[2]! - starts[0]!).toBeGreaterThanOrEqual(2 * INTERVAL - 1_000);
    expect(v.totals.failed).toBe(0);

    const described = await stack.temporal.workflow.getHandle(started.subscriptionId).describe();
    expect(described.typedSearchAttributes.get(PaymentKind)).toBe('subscription');
    expect(described.typedSearchAttributes.get(PaymentStatus)).toBe('canceled');
    // Each period is a child checkout workflow under its session id, kind recurring_payment.
    const child = await stack.temporal.workflow.getHandle(paid[0]!.sessionId).describe();
    expect(child.typedSearchAttributes.get(PaymentKind)).toBe('recurring_payment');
  }, 90_000);

  it('pause: no charge while paused; resume: charging again', async () => {
    const token = await newToken();
    const { subscriptionId } = await stack.payments.subscriptions.start({
      reference: ref('pause'),
      token,
      amount: rub(700),
      intervalMs: INTERVAL,
      customer,
    });
    await until(subscriptionId, (s) => s.totals.succeeded >= 1);
    const paused = await stack.payments.subscriptions.pause(subscriptionId);
    expect(paused.status).toBe('paused');
    expect(paused.nextChargeAt).toBeUndefined();
    const before = await until(subscriptionId, settled);
    await sleep(3 * INTERVAL);
    const during = await stack.payments.subscriptions.get(subscriptionId);
    expect(during.totals.attempts).toBe(before.totals.attempts);
    await expect(stack.payments.subscriptions.pause(subscriptionId)).rejects.toThrow(SessionStateError);

    const resumedAt = Date.now();
    const resumed = await stack.payments.subscriptions.resume(subscriptionId);
    expect(resumed.status).toBe('active');
    const after = await until(subscriptionId, (s) => s.totals.succeeded > before.totals.succeeded);
    // The first charge after the resume is the period that was due while paused (missed periods are
    // not charged later), and it succeeded. A later period may already have started by now.
    const next = after.charges[before.totals.attempts]!;
    expect(next).toMatchObject({ period: before.period, attempt: 0, outcome: 'succeeded' });
    expect(Date.parse(next.startedAt)).toBeGreaterThanOrEqual(resumedAt);
    expect(after.charges.slice(0, before.totals.attempts)).toEqual(before.charges);
    await expect(stack.payments.subscriptions.resume(subscriptionId)).rejects.toThrow(SessionStateError);
    await stack.payments.subscriptions.cancel(subscriptionId);
    // The backend hears it: charged, paused (no charge until) resumed, charged, canceled.
    const types = await eventTypes(subscriptionId, (t) => t.includes('subscription.canceled'));
    expect(collapsed(types).slice(0, 5)).toEqual([
      'subscription.created',
      'subscription.charged',
      'subscription.paused',
      'subscription.resumed',
      'subscription.charged',
    ]);
    expect(types.filter((t) => t === 'subscription.canceled')).toHaveLength(1);
  }, 90_000);

  it('change: the next period is charged the new amount; bad input is refused synchronously', async () => {
    const token = await newToken();
    const { subscriptionId } = await stack.payments.subscriptions.start({
      reference: ref('change'),
      token,
      amount: rub(1_000),
      intervalMs: INTERVAL,
      customer,
    });
    await until(subscriptionId, (s) => s.totals.succeeded >= 1);

    // Refused by the client's zod input and by the workflow's validator alike; nothing changes.
    await expect(stack.payments.subscriptions.change(subscriptionId, { amount: -5 })).rejects.toThrow(
      InputValidationError,
    );
    await expect(stack.payments.subscriptions.change(subscriptionId, {})).rejects.toThrow(
      InputValidationError,
    );
    const handle = stack.temporal.workflow.getHandle(subscriptionId);
    const refused = await handle
      .executeUpdate(changeSubscriptionUpdate, { args: [{ amount: -5 }] })
      .catch((e: unknown) => e);
    // The workflow's own refusal is typed: InvalidArgument with the field and the rule as details.
    expect(refused).toBeInstanceOf(WorkflowUpdateFailedError);
    expect(failureOf(refused)).toMatchObject({
      type: 'InvalidArgument',
      details: { field: 'amount', rule: 'a positive integer (minor units)' },
    });
    const tooShort = await handle
      .executeUpdate(changeSubscriptionUpdate, { args: [{ intervalMs: 10 }] })
      .catch((e: unknown) => e);
    expect(failureOf(tooShort)).toMatchObject({ type: 'InvalidArgument', details: { field: 'intervalMs' } });
    expect((await stack.payments.subscriptions.get(subscriptionId)).amount.amount).toBe(1_000);

    const changed = await stack.payments.subscriptions.change(subscriptionId, { amount: 2_500 });
    expect(changed.amount).toEqual({ amount: 2_500, currency: 'rub' });
    const v = await until(subscriptionId, (s) =>
      s.charges.some((c) => c.period > changed.period && c.outcome === 'succeeded'),
    );
    await stack.payments.subscriptions.cancel(subscriptionId);
    const later = v.charges.filter((c) => c.period > changed.period);
    expect(later.length).toBeGreaterThan(0);
    for (const c of later) expect(c.amount).toBe(2_500);
    const paidLater = later.find((c) => c.outcome === 'succeeded')!;
    expect((await moved(paidLater.sessionId)).map((e) => e.amount)).toEqual([2_500]);
    // Periods before the change kept the amount they were charged.
    for (const c of v.charges.filter((x) => x.period < changed.period)) expect(c.amount).toBe(1_000);
  }, 90_000);

  it('a disabled token: dunning retries, then past_due -> canceled; nothing charged, no attempt twice', async () => {
    const token = await newToken();
    await stack.provider.recurringTokenDisable({ recurring_token_info: { token } });
    const { subscriptionId } = await stack.payments.subscriptions.start({
      reference: ref('dunning'),
      token,
      amount: rub(1_200),
      intervalMs: INTERVAL,
      customer,
      dunning: { retryDelaysMs: [300, 600], onExhausted: 'cancel' },
    });
    const result = (await stack.temporal.workflow.getHandle(subscriptionId).result()) as SubscriptionView;
    expect(result.status).toBe('canceled');
    expect(result.canceledReason).toEqual({
      code: 'past_due',
      detail: 'period 1 unpaid after 3 attempts (provider_error (recurring_token_inactive))',
    });
    expect(result.dunning).toMatchObject({ period: 1, failures: 3, exhausted: true });
    expect(result.charges.map((c) => [c.period, c.attempt, c.outcome])).toEqual([
      [1, 0, 'failed'],
      [1, 1, 'failed'],
      [1, 2, 'failed'],
    ]);
    expect(new Set(result.charges.map((c) => c.sessionId)).size).toBe(3);
    for (const c of result.charges)
      expect(c.reason).toEqual({ code: 'provider_error', providerCode: 'recurring_token_inactive' });
    expect(result.totals).toMatchObject({ attempts: 3, succeeded: 0, failed: 3, chargedAmount: 0 });
    for (const c of result.charges) expect(await moved(c.sessionId)).toHaveLength(0);
    // The retries waited their delays.
    const t = result.charges.map((c) => Date.parse(c.startedAt));
    expect(t[1]! - Date.parse(result.charges[0]!.finishedAt!)).toBeGreaterThanOrEqual(250);
    expect(t[2]! - Date.parse(result.charges[1]!.finishedAt!)).toBeGreaterThanOrEqual(550);
    const described = await stack.temporal.workflow.getHandle(subscriptionId).describe();
    expect(described.typedSearchAttributes.get(PaymentStatus)).toBe('canceled');
    await expect(stack.payments.subscriptions.resume(subscriptionId)).rejects.toThrow(SessionStateError);
    // Events: each failed attempt, then past due, then canceled; each charge session failed.
    expect(await eventTypes(subscriptionId, (t) => t.includes('subscription.canceled'))).toEqual([
      'subscription.created',
      'subscription.charge_failed',
      'subscription.charge_failed',
      'subscription.charge_failed',
      'subscription.past_due',
      'subscription.canceled',
    ]);
    for (const c of result.charges) {
      const types = await eventTypes(c.sessionId, (t) => t.includes('session.failed'));
      expect([types[0], types.at(-1)]).toEqual(['session.created', 'session.failed']);
    }
  }, 90_000);

  it('dunning with the pause policy: past_due until a new token and resume, then charging again', async () => {
    const bad = await newToken();
    await stack.provider.recurringTokenDisable({ recurring_token_info: { token: bad } });
    const good = await newToken();
    const { subscriptionId } = await stack.payments.subscriptions.start({
      reference: ref('pastdue'),
      token: bad,
      amount: rub(800),
      intervalMs: INTERVAL,
      customer,
      dunning: { retryDelaysMs: [300], onExhausted: 'pause' },
    });
    const pastDue = await until(subscriptionId, (s) => s.status === 'past_due');
    expect(pastDue.dunning).toMatchObject({ period: 1, failures: 2, exhausted: true });
    expect(pastDue.period).toBe(2);
    await stack.payments.subscriptions.change(subscriptionId, { token: good });
    await stack.payments.subscriptions.resume(subscriptionId);
    const v = await until(subscriptionId, (s) => s.totals.succeeded >= 1);
    await stack.payments.subscriptions.cancel(subscriptionId);
    const paid = v.charges.find((c) => c.outcome === 'succeeded')!;
    expect(paid.period).toBe(2);
    expect(v.dunning).toBeUndefined();
    expect(await moved(paid.sessionId)).toHaveLength(1);
    const types = await eventTypes(subscriptionId, (t) => t.includes('subscription.canceled'));
    expect(collapsed(types).slice(0, 5)).toEqual([
      'subscription.created',
      'subscription.charge_failed',
      'subscription.past_due',
      'subscription.resumed',
      'subscription.charged',
    ]);
    expect(types.filter((t) => t === 'subscription.charge_failed')).toHaveLength(2);
  }, 90_000);

  it('continue-as-new after 2 periods keeps the schedule and the charge history', async () => {
    const token = await newToken();
    const t0 = Date.now();
    const { subscriptionId } = await stack.payments.subscriptions.start({
      reference: ref('can'),
      token,
      amount: rub(300),
      intervalMs: INTERVAL,
      customer,
      periodsPerRun: 2,
    });
    const handle = stack.temporal.workflow.getHandle(subscriptionId);
    const firstRun = (await handle.describe()).runId;
    const v = await until(subscriptionId, (s) => s.totals.succeeded >= 3 && settled(s), 45_000);
    await stack.payments.subscriptions.cancel(subscriptionId);
    expect(v.runs).toBeGreaterThanOrEqual(1);
    expect((await handle.describe()).runId).not.toBe(firstRun);
    expect(v.charges.map((c) => c.period).slice(0, 3)).toEqual([1, 2, 3]);
    expect(v.charges).toHaveLength(v.totals.attempts);
    expect(v.period).toBe(v.totals.succeeded + 1);
    expect(v.totals.chargedAmount).toBe(300 * v.totals.succeeded);
    // The schedule carried on: the third period (in the second run) was not due before two intervals
    // after the start (a new run that forgot the schedule would charge at once), and it did not wait
    // a schedule of its own either. startedAt is taken after the session was initiated: late under
    // load, never early; hence no tight upper bound.
    const starts = v.charges.map((c) => Date.parse(c.startedAt));
    expect(starts[2]!).toBeGreaterThanOrEqual(t0 + 2 * INTERVAL);
    expect(starts[2]! - starts[0]!).toBeGreaterThanOrEqual(2 * INTERVAL - 1_000);
    expect(starts[2]! - starts[1]!).toBeLessThan(INTERVAL + 15_000);

    // Deterministic: the first run (ended by continue-as-new) and the last replay without divergence.
    await stack.temporal.workflow.getHandle(subscriptionId).result();
    for (const runId of [firstRun, undefined]) {
      const history = await stack.temporal.workflow.getHandle(subscriptionId, runId).fetchHistory();
      await Worker.runReplayHistory({ workflowBundle: { codePath: sharedWorkflowBundlePath() } }, history);
    }
  }, 90_000);

  it('firstChargeAt: nothing is charged before it, then the first period is', async () => {
    const token = await newToken();
    const firstChargeMs = Date.now() + 4_000;
    const firstChargeAt = new Date(firstChargeMs).toISOString();
    const started = await stack.payments.subscriptions.start({
      reference: ref('later'),
      token,
      amount: rub(600),
      intervalMs: 60_000,
      customer,
      firstChargeAt,
    });
    expect(started.nextChargeAt).toBe(firstChargeAt);
    // Look once more a second before it is due. Only an answer that came back before firstChargeAt
    // proves anything (a slow query may be answered after it); startedAt below is checked anyway.
    await sleep(firstChargeMs - 1_000 - Date.now());
    if (Date.now() < firstChargeMs - 500) {
      const early = await stack.payments.subscriptions.get(started.subscriptionId);
      if (Date.now() < firstChargeMs) expect(early.totals.attempts).toBe(0);
    }
    const v = await until(started.subscriptionId, (s) => s.totals.succeeded === 1);
    await stack.payments.subscriptions.cancel(started.subscriptionId);
    expect(Date.parse(v.charges[0]!.startedAt)).toBeGreaterThanOrEqual(Date.parse(firstChargeAt));
    expect(v.nextChargeAt).toBe(new Date(Date.parse(firstChargeAt) + 60_000).toISOString());
  }, 60_000);

  it('cancel stops future charges; the canceled subscription stays readable; unknown ids are not found', async () => {
    const token = await newToken();
    const { subscriptionId } = await stack.payments.subscriptions.start({
      reference: ref('cancel'),
      token,
      amount: rub(400),
      intervalMs: INTERVAL,
      customer,
    });
    await until(subscriptionId, (s) => s.totals.succeeded >= 1);
    const canceled = await stack.payments.subscriptions.cancel(subscriptionId, 'customer left');
    expect(canceled).toMatchObject({
      status: 'canceled',
      canceledReason: { code: 'canceled_by_partner', detail: 'customer left' },
    });
    const result = (await stack.temporal.workflow.getHandle(subscriptionId).result()) as SubscriptionView;
    await sleep(2 * INTERVAL);
    const later = await stack.payments.subscriptions.get(subscriptionId);
    expect(later.status).toBe('canceled');
    expect(later.totals.attempts).toBe(result.totals.attempts);
    expect(later.charges.every((c) => c.outcome !== 'pending')).toBe(true);
    await expect(stack.payments.subscriptions.cancel(subscriptionId)).rejects.toThrow(SessionStateError);
    await expect(stack.payments.subscriptions.get('sub-nope-never')).rejects.toThrow(
      SubscriptionNotFoundError,
    );
    await expect(stack.payments.subscriptions.get('ps_123')).rejects.toThrow(SubscriptionNotFoundError);
  }, 60_000);
});
