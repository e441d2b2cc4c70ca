/**
 * The policies of recurring billing (docs/billing.md), one by one, on the time-skipping server with a
 * stand-in for each charge's session (test/helpers/billing-env.ts): decline classes (soft retried on the
 * schedule, hard stopped until a new token, provider unavailable never a decline), owed periods under each
 * owed policy and the partner's collect and write-off, catch-up `one` and `all` after a late charge and a
 * three-day provider outage, cancel during a collection and at the period end, pause with a resume date,
 * proration with the next invoice, one run per period. Every expected time and amount is worked out here
 * by hand; every run of every chain replays.
 */
import { WorkflowUpdateFailedError, type WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { failureOf } from '../../common/failures';
import {
  cancelSubscriptionUpdate,
  changeSubscriptionUpdate,
  collectOwedUpdate,
  pauseSubscriptionUpdate,
  resumeSubscriptionUpdate,
  subscriptionQuery,
  writeOffOwedUpdate,
} from '../../common/messages';
import type { ChargeRecord, SubscriptionView } from '../../common/views';
import { billingEnv, typesOf, type BillingEnv } from '../helpers/billing-env';

jest.setTimeout(120_000);

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

let b: BillingEnv;
beforeEach(async () => {
  b = await billingEnv();
});
afterEach(async () => {
  await b?.close();
});

const ended = async (h: WorkflowHandleWithFirstExecutionRunId) => (await h.result()) as SubscriptionView;
const view = (h: WorkflowHandleWithFirstExecutionRunId) => h.query(subscriptionQuery);
/** Each charge as [period, attempt, kind, outcome, startedAt to the minute]. */
const rows = (v: SubscriptionView) =>
  v.charges.map((c) => [c.period, c.attempt, c.kind, c.outcome, c.startedAt.slice(0, 16)]);
const fails = (providerCode: string) => ({ takesMs: MIN, phase: 'failed' as const, providerCode });
const ok = { takesMs: MIN, phase: 'succeeded' as const };
/** Money truth: one charge at a time, and no period paid twice. */
function oneAtATime(charges: ChargeRecord[]): void {
  const sorted = [...charges].sort((x, y) => Date.parse(x.startedAt) - Date.parse(y.startedAt));
  for (let i = 1; i < sorted.length; i++)
    expect(Date.parse(sorted[i]!.startedAt)).toBeGreaterThanOrEqual(Date.parse(sorted[i - 1]!.finishedAt!));
  const paid = charges.filter((c) => c.outcome === 'succeeded').map((c) => c.period);
  expect(new Set(paid).size).toBe(paid.length);
  expect(new Set(charges.map((c) => c.reference)).size).toBe(charges.length);
}

describe('decline classes', () => {
  test('soft (insufficient funds, the sandbox loser): retried on the dunning schedule, then paid', async () => {
    const { handle, reference } = await b.subscribe({
      schedule: { interval: 'month', count: 1, anchor: '2027-01-10T09:00:00Z' },
      endAfterPeriods: 3,
      dunning: { retryDelaysMs: [DAY, 3 * DAY] },
    });
    b.plan = (r) =>
      r === `${reference}:p2` || r === `${reference}:p2:r1` ? fails('insufficient_funds') : ok;
    const v = await ended(handle);
    expect(rows(v)).toEqual([
      [1, 0, 'due', 'succeeded', '2027-01-10T09:00'],
      [2, 0, 'due', 'failed', '2027-02-10T09:00'],
      [2, 1, 'retry', 'failed', '2027-02-11T09:01'], // a day after the first attempt ended
      [2, 2, 'retry', 'succeeded', '2027-02-14T09:02'], // three days after the second
      [3, 0, 'due', 'succeeded', '2027-03-10T09:00'], // the due date did not move
    ]);
    expect(v.charges.filter((c) => c.outcome === 'failed').map((c) => c.declineClass)).toEqual([
      'soft',
      'soft',
    ]);
    expect(v.periods.map((p) => [p.period, p.status, p.attempts])).toEqual([
      [1, 'paid', 1],
      [2, 'paid', 3],
      [3, 'paid', 1],
    ]);
    expect(v).toMatchObject({ status: 'ended', totals: { succeeded: 3, failed: 2, owedPeriods: 0 } });
    expect(v.dunning).toBeUndefined();
    expect(typesOf(b, v.subscriptionId)).toEqual([
      'subscription.created',
      'subscription.charged',
      'subscription.charge_failed',
      'subscription.charge_failed',
      'subscription.charged',
      'subscription.charged',
      'subscription.ended',
    ]);
    // One run per billing period: three periods, each settled in its own run (the last one ends).
    expect((await b.runs(handle)).length).toBe(3);
    expect(v.runs).toBe(2);
    oneAtATime(v.charges);
    expect(await b.replay(handle)).toEqual([]);
  });

  test('hard (fraud, the sandbox thief): no retry, the period owed, billing waits for a new token', async () => {
    const { handle, reference } = await b.subscribe({
      schedule: { interval: 'month', count: 1, anchor: '2027-01-10T09:00:00Z' },
      endAfterPeriods: 4,
      policy: { spacingMs: HOUR },
    });
    b.plan = (r) => (r === `${reference}:p2` ? fails('fraud_suspected') : ok);
    await b.skipTo('2027-02-20T00:00:00Z');
    const stopped = await view(handle);
    expect(stopped).toMatchObject({ status: 'past_due', paymentMethodRequired: true, nextDueDates: [] });
    expect(stopped.periods.find((p) => p.period === 2)).toMatchObject({
      status: 'owed',
      attempts: 1,
      declineClass: 'hard',
      lastReason: { code: 'provider_error', providerCode: 'fraud_suspected' },
    });
    expect(stopped.totals).toMatchObject({ owedPeriods: 1, owedAmount: 100 });
    // Nothing charged meanwhile, however long it waits.
    await b.skipTo('2027-03-15T00:00:00Z');
    expect(b.asked.map((a) => a.reference)).toEqual([`${reference}:p1`, `${reference}:p2`]);
    // A new token, then resume: the billing day stays; the owed period is collected after the next charge.
    await handle.executeUpdate(changeSubscriptionUpdate, { args: [{ token: 'rt_new' }] });
    const resumed = await handle.executeUpdate(resumeSubscriptionUpdate, { args: [{}] });
    expect(resumed).toMatchObject({ status: 'active', nextChargeAt: '2027-04-10T09:00:00.000Z' });
    expect(resumed.paymentMethodRequired).toBeUndefined();
    const v = await ended(handle);
    expect(rows(v)).toEqual([
      [1, 0, 'due', 'succeeded', '2027-01-10T09:00'],
      [2, 0, 'due', 'failed', '2027-02-10T09:00'],
      [3, 0, 'due', 'succeeded', '2027-04-10T09:00'],
      [2, 1, 'collect', 'succeeded', '2027-04-10T10:01'], // an hour after the charge that proved the token
      [4, 0, 'due', 'succeeded', '2027-05-10T09:00'],
    ]);
    expect(b.asked.slice(2).map((a) => a.token)).toEqual(['rt_new', 'rt_new', 'rt_new']);
    expect(v.periods.find((p) => p.period === 2)).toMatchObject({ status: 'paid', attempts: 2 });
    expect(v.totals).toMatchObject({ owedPeriods: 0, owedAmount: 0, collectedPeriods: 1, succeeded: 4 });
    expect(typesOf(b, v.subscriptionId)).toEqual([
      'subscription.created',
      'subscription.charged',
      'subscription.charge_failed',
      'subscription.period_owed',
      'subscription.past_due',
      'subscription.payment_method_required',
      'subscription.changed',
      'subscription.resumed',
      'subscription.charged',
      'subscription.period_collected',
      'subscription.charged',
      'subscription.ended',
    ]);
    const owedEvent = b.events.get(v.subscriptionId)!.find((e) => e.type === 'subscription.period_owed')!;
    expect(owedEvent.data).toMatchObject({ billingPeriod: { period: 2, status: 'owed', amount: 100 } });
    oneAtATime(v.charges);
    expect(await b.replay(handle)).toEqual([]);
  });

  test('provider unavailable is never a decline: its result is tried again, and an unreachable provider waited out', async () => {
    const { handle, reference } = await b.subscribe({
      schedule: { interval: 'month', count: 1, anchor: '2027-01-10T09:00:00Z' },
      endAfterPeriods: 2,
      dunning: { retryDelaysMs: [DAY], unavailableRetryMs: HOUR },
    });
    b.plan = (r) => {
      if (r === `${reference}:p1` || r === `${reference}:p1:r1`) return fails('internal_error');
      // The provider cannot be reached for three days: the session of the charge opens after that.
      if (r === `${reference}:p2`) return { ...ok, opensAfterMs: 3 * DAY };
      return ok;
    };
    await b.skipTo('2027-02-11T09:00:00Z');
    const waiting = await view(handle);
    expect(waiting).toMatchObject({ status: 'active', attention: { code: 'charge_not_open' } });
    expect(waiting.totals.failed).toBe(2);
    const v = await ended(handle);
    expect(rows(v)).toEqual([
      [1, 0, 'due', 'failed', '2027-01-10T09:00'],
      [1, 1, 'retry', 'failed', '2027-01-10T10:01'], // an hour after
      [1, 2, 'retry', 'succeeded', '2027-01-10T12:02'], // then two (the wait doubles)
      [2, 0, 'due', 'succeeded', '2027-02-10T09:00'],
    ]);
    expect(v.charges.slice(0, 2).map((c) => c.declineClass)).toEqual(['unavailable', 'unavailable']);
    // Opened at the first try after the provider came back (tries are at most an hour apart), then paid.
    const paidAt = Date.parse(v.charges[3]!.finishedAt!);
    expect(paidAt).toBeGreaterThanOrEqual(Date.parse('2027-02-13T09:01:00Z'));
    expect(paidAt).toBeLessThanOrEqual(Date.parse('2027-02-13T10:02:00Z'));
    // Never a decline: no charge_failed, nothing owed, no dunning failure counted.
    expect(typesOf(b, v.subscriptionId)).toEqual([
      'subscription.created',
      'subscription.charged',
      'subscription.charged',
      'subscription.ended',
    ]);
    expect(v.periods.map((p) => [p.period, p.status, p.attempts])).toEqual([
      [1, 'paid', 3],
      [2, 'paid', 1],
    ]);
    expect(v.attention).toBeUndefined();
    expect(await b.replay(handle)).toEqual([]);
  });
});

describe('owed periods', () => {
  const failingFirst = (reference: string) => (r: string) =>
    r.startsWith(`${reference}:p1`) && !r.includes(':r2') ? fails('insufficient_funds') : ok;

  test('leave_open: owed until the partner collects it; the workflow waits for that after the end', async () => {
    const { handle, reference } = await b.subscribe({
      schedule: { interval: 'month', count: 1, anchor: '2027-01-10T09:00:00Z' },
      endAfterPeriods: 3,
      dunning: { retryDelaysMs: [DAY], onExhausted: 'continue' },
      policy: { owed: 'leave_open', spacingMs: HOUR },
    });
    b.plan = failingFirst(reference);
    await b.skipTo('2027-04-01T00:00:00Z');
    const open = await view(handle);
    expect(open.status).toBe('ended');
    expect(open.periods.map((p) => [p.period, p.status])).toEqual([
      [1, 'owed'],
      [2, 'paid'],
      [3, 'paid'],
    ]);
    expect(open.collecting).toBeUndefined();
    // A request for a period that is not owed is refused, naming why.
    const wrong = await handle
      .executeUpdate(collectOwedUpdate, { args: [{ periods: [2] }] })
      .catch((e: unknown) => e);
    expect(wrong).toBeInstanceOf(WorkflowUpdateFailedError);
    expect(failureOf(wrong)).toMatchObject({ type: 'StateConflict', details: { code: 'period_not_owed' } });
    const collecting = await handle.executeUpdate(collectOwedUpdate, { args: [{}] });
    expect(collecting.collecting).toEqual([1]);
    const v = await ended(handle);
    expect(rows(v).at(-1)).toEqual([1, 2, 'collect', 'succeeded', '2027-04-01T00:00']);
    expect(v.totals).toMatchObject({ owedPeriods: 0, collectedPeriods: 1 });
    expect(typesOf(b, v.subscriptionId).slice(-2)).toEqual([
      'subscription.ended',
      'subscription.period_collected',
    ]);
    expect(await b.replay(handle)).toEqual([]);
  });

  test('write_off policy: a period unpaid after its retries is written off at once, and said so', async () => {
    const { handle, reference } = await b.subscribe({
      schedule: { interval: 'month', count: 1, anchor: '2027-01-10T09:00:00Z' },
      endAfterPeriods: 2,
      dunning: { retryDelaysMs: [DAY], onExhausted: 'continue' },
      policy: { owed: 'write_off' },
    });
    b.plan = failingFirst(reference);
    const v = await ended(handle);
    expect(v.periods.map((p) => [p.period, p.status, p.attempts])).toEqual([
      [1, 'written_off', 2],
      [2, 'paid', 1],
    ]);
    expect(v.periods[0]!.writeOffReason).toMatch(/write_off/);
    expect(v.totals).toMatchObject({ writtenOffPeriods: 1, writtenOffAmount: 100, owedPeriods: 0 });
    expect(typesOf(b, v.subscriptionId)).toContain('subscription.period_written_off');
    expect(await b.replay(handle)).toEqual([]);
  });

  test('the partner writes an owed period off with its words; a canceled subscription closes then', async () => {
    const { handle, reference } = await b.subscribe({
      schedule: { interval: 'month', count: 1, anchor: '2027-01-10T09:00:00Z' },
      dunning: { retryDelaysMs: [DAY] }, // onExhausted cancel (the default)
    });
    b.plan = failingFirst(reference);
    await b.skipTo('2027-01-20T00:00:00Z');
    const canceled = await view(handle);
    expect(canceled).toMatchObject({
      status: 'canceled',
      canceledReason: { code: 'past_due' },
      totals: { owedPeriods: 1 },
    });
    // Canceled, but what is owed is not forgotten: the workflow stays for the partner's decision.
    await handle.executeUpdate(writeOffOwedUpdate, { args: [{ periods: [1], reason: 'goodwill' }] });
    const v = await ended(handle);
    expect(v.periods[0]).toMatchObject({ period: 1, status: 'written_off', writeOffReason: 'goodwill' });
    const none = await b.env.client.workflow
      .getHandle(v.subscriptionId)
      .executeUpdate(collectOwedUpdate, { args: [{}] })
      .catch((e: unknown) => e);
    expect(none).toBeInstanceOf(Error); // the workflow has closed
    expect(await b.replay(handle)).toEqual([]);
  });
});

describe('catch-up', () => {
  /**
   * Daily at 09:00: the second charge takes three days (a late result), and the seventh waits three days
   * for a provider that cannot be reached (downtime): each time, later periods fall due meanwhile.
   */
  async function lateAndDown(catchUp: 'one' | 'all') {
    const { handle, reference } = await b.subscribe({
      schedule: { interval: 'day', count: 1, anchor: '2027-01-10T09:00:00Z' },
      endAfterPeriods: 10,
      policy: { catchUp, owed: 'leave_open', spacingMs: HOUR },
    });
    b.plan = (r) => {
      if (r === `${reference}:p2`) return { ...ok, takesMs: 3 * DAY };
      if (r === `${reference}:p7`) return { ...ok, opensAfterMs: 3 * DAY };
      return ok;
    };
    await b.skipTo('2027-01-25T00:00:00Z');
    return { handle, v: await view(handle) };
  }

  /** `ms` after period k's charge ended, to the minute. */
  const after = (v: SubscriptionView, k: number, ms: number) =>
    new Date(Date.parse(v.charges.find((c) => c.period === k)!.finishedAt!) + ms).toISOString().slice(0, 16);

  test('one (the default): the latest due period is charged, the ones missed are owed, never a burst', async () => {
    const { handle, v } = await lateAndDown('one');
    expect(rows(v).map((r) => [r[0], r[4]])).toEqual([
      [1, '2027-01-10T09:00'],
      [2, '2027-01-11T09:00'], // took three days
      [5, '2027-01-14T09:00'], // 3 and 4 fell due meanwhile: owed
      [6, '2027-01-15T09:00'],
      [7, '2027-01-16T09:00'], // paid three days later, when the provider was back
      [10, after(v, 7, 0)], // 8 and 9 owed, 10 charged at once
    ]);
    expect(v.periods.filter((p) => p.status === 'owed').map((p) => [p.period, p.attempts, p.dueAt])).toEqual([
      [3, 0, '2027-01-12T09:00:00.000Z'],
      [4, 0, '2027-01-13T09:00:00.000Z'],
      [8, 0, '2027-01-17T09:00:00.000Z'],
      [9, 0, '2027-01-18T09:00:00.000Z'],
    ]);
    expect(v.totals).toMatchObject({ owedPeriods: 4, owedAmount: 400 });
    expect(typesOf(b, v.subscriptionId).filter((t) => t === 'subscription.period_owed')).toHaveLength(4);
    expect(v.status).toBe('ended');
    oneAtATime(v.charges);
    await handle.executeUpdate(writeOffOwedUpdate, { args: [{ reason: 'outage' }] });
    await ended(handle);
    expect(await b.replay(handle)).toEqual([]);
  });

  test('all: every missed period is charged, one at a time, spaced', async () => {
    const { handle, v } = await lateAndDown('all');
    expect(rows(v).map((r) => [r[0], r[4]])).toEqual([
      [1, '2027-01-10T09:00'],
      [2, '2027-01-11T09:00'],
      [3, '2027-01-14T10:00'], // an hour after period 2 ended
      [4, '2027-01-14T11:01'],
      [5, '2027-01-14T12:02'],
      [6, '2027-01-15T09:00'], // on its own due date again
      [7, '2027-01-16T09:00'], // paid three days later, when the provider was back
      [8, after(v, 7, HOUR)], // spaced an hour after the charge before
      [9, after(v, 8, HOUR)],
      [10, after(v, 9, HOUR)],
    ]);
    expect(v.periods.every((p) => p.status === 'paid')).toBe(true);
    expect(v.status).toBe('ended');
    oneAtATime(v.charges);
    await ended(handle);
    expect(await b.replay(handle)).toEqual([]);
  });
});

describe('cancel, pause, change', () => {
  test('a cancel while an owed period is collected: the period in dunning is owed once the collection ends', async () => {
    const { handle, reference } = await b.subscribe({
      schedule: { interval: 'month', count: 1, anchor: '2027-01-10T09:00:00Z' },
      dunning: { retryDelaysMs: [DAY, 3 * DAY], onExhausted: 'continue' },
      policy: { owed: 'leave_open', spacingMs: HOUR },
    });
    // Period 1 fails every attempt (owed); period 2 fails its first (in dunning); the collection of
    // period 1 takes six hours, so that the cancel comes while it is in flight.
    b.plan = (r) => {
      if (r === `${reference}:p1:r3`) return { ...ok, takesMs: 6 * HOUR };
      if (r.startsWith(`${reference}:p1`) || r === `${reference}:p2`) return fails('insufficient_funds');
      return ok;
    };
    await b.skipTo('2027-02-10T12:00:00Z');
    expect((await view(handle)).periods.map((p) => [p.period, p.status])).toEqual([
      [1, 'owed'],
      [2, 'attempted'],
    ]);
    await handle.executeUpdate(collectOwedUpdate, { args: [{}] });
    await b.skipTo('2027-02-10T15:00:00Z');
    expect(rows(await view(handle)).at(-1)).toEqual([1, 3, 'collect', 'pending', '2027-02-10T12:00']);
    const canceled = await handle.executeUpdate(cancelSubscriptionUpdate, { args: [{ reason: 'moved' }] });
    expect(canceled.status).toBe('canceled');
    await b.skipTo('2027-02-11T00:00:00Z');
    const v = await view(handle);
    // Period 2's retries ended with the subscription: owed, not left open with no retry to come.
    expect(v.periods.map((p) => [p.period, p.status])).toEqual([
      [1, 'paid'],
      [2, 'owed'],
    ]);
    expect(v.totals).toMatchObject({ owedPeriods: 1, collectedPeriods: 1 });
    await handle.executeUpdate(writeOffOwedUpdate, { args: [{ periods: [2] }] });
    expect((await ended(handle)).periods.map((p) => [p.period, p.status])).toEqual([
      [1, 'paid'],
      [2, 'written_off'],
    ]);
    oneAtATime(v.charges);
    expect(b.asked.map((a) => a.reference)).not.toContain(`${reference}:p2:r1`);
    expect(await b.replay(handle)).toEqual([]);
  });

  test('cancel at the period end: nothing more is charged, canceled when the next period would fall due', async () => {
    const { handle, reference } = await b.subscribe({
      schedule: { interval: 'month', count: 1, anchor: '2027-01-10T09:00:00Z' },
    });
    await b.skipTo('2027-02-15T00:00:00Z');
    const scheduled = await handle.executeUpdate(cancelSubscriptionUpdate, {
      args: [{ atPeriodEnd: true, reason: 'moving out' }],
    });
    expect(scheduled).toMatchObject({
      status: 'active',
      cancelation: { atPeriodEnd: true, effectiveAt: '2027-03-10T09:00:00.000Z' },
      nextDueDates: [],
    });
    expect(scheduled.nextChargeAt).toBeUndefined();
    // Withdrawn by resume, and asked again.
    const kept = await handle.executeUpdate(resumeSubscriptionUpdate, { args: [{}] });
    expect(kept.cancelation).toBeUndefined();
    expect(kept.nextDueDates?.[0]).toBe('2027-03-10T09:00:00.000Z');
    await handle.executeUpdate(cancelSubscriptionUpdate, { args: [{ atPeriodEnd: true }] });
    const v = await ended(handle);
    expect(v).toMatchObject({
      status: 'canceled',
      cancelation: { atPeriodEnd: true, effectiveAt: '2027-03-10T09:00:00.000Z' },
    });
    expect(b.asked.map((a) => a.reference)).toEqual([`${reference}:p1`, `${reference}:p2`]);
    const events = b.events.get(v.subscriptionId)!;
    expect(events.map((e) => e.type).slice(-4)).toEqual([
      'subscription.cancel_scheduled',
      'subscription.resumed',
      'subscription.cancel_scheduled',
      'subscription.canceled',
    ]);
    expect(events.at(-1)!.data).toMatchObject({ cancelation: { atPeriodEnd: true } });
    expect(await b.replay(handle)).toEqual([]);
  });

  test('pause with a resume date: resumes on its own, the billing day kept', async () => {
    const { handle, reference } = await b.subscribe({
      schedule: { interval: 'month', count: 1, anchor: '2027-01-10T09:00:00Z' },
      endAfterPeriods: 2,
    });
    await b.skipTo('2027-01-15T00:00:00Z');
    const resumeAt = Date.parse('2027-03-20T00:00:00Z');
    const paused = await handle.executeUpdate(pauseSubscriptionUpdate, { args: [{ resumeAt }] });
    expect(paused).toMatchObject({ status: 'paused', pausedUntil: '2027-03-20T00:00:00.000Z' });
    const v = await ended(handle);
    expect(rows(v).map((r) => [r[0], r[4]])).toEqual([
      [1, '2027-01-10T09:00'],
      [2, '2027-04-10T09:00'], // the first billing day after it resumed on 20 March
    ]);
    expect(b.asked.map((a) => a.reference)).toEqual([`${reference}:p1`, `${reference}:p2`]);
    expect(typesOf(b, v.subscriptionId)).toEqual([
      'subscription.created',
      'subscription.charged',
      'subscription.paused',
      'subscription.resumed',
      'subscription.charged',
      'subscription.ended',
    ]);
    expect(await b.replay(handle)).toEqual([]);
  });

  test('proration with the next invoice: the rest of the period at the new price, credit or charge', async () => {
    const { handle } = await b.subscribe({
      schedule: { interval: 'month', count: 1, anchor: '2027-01-01T00:00:00Z' },
      amount: { amount: 3_100, currency: 'rub' },
      endAfterPeriods: 5,
      policy: { proration: 'next_invoice' },
    });
    // January (31 days) paid at 3100; on the 22nd (10 days left) the price doubles: +1000 with February.
    await b.skipTo('2027-01-22T00:00:00Z');
    const up = await handle.executeUpdate(changeSubscriptionUpdate, { args: [{ amount: 6_200 }] });
    expect(up).toMatchObject({ amount: { amount: 6_200 }, credit: 1_000 });
    // March (31 days) paid at 6200; on the 22nd the price drops to 1550: 4650 * 10/31 = 1500 credited.
    await b.skipTo('2027-03-22T00:00:00Z');
    const down = await handle.executeUpdate(changeSubscriptionUpdate, { args: [{ amount: 1_550 }] });
    expect(down.credit).toBe(-1_500);
    // And a change with proration none: from the next period, nothing carried.
    await b.skipTo('2027-04-10T00:00:00Z');
    await handle.executeUpdate(changeSubscriptionUpdate, { args: [{ amount: 1_600, proration: 'none' }] });
    const v = await ended(handle);
    expect(v.periods.map((p) => [p.period, p.amount, p.adjustment])).toEqual([
      [1, 3_100, undefined],
      [2, 7_200, 1_000],
      [3, 6_200, undefined],
      [4, 50, -1_500],
      [5, 1_600, undefined],
    ]);
    expect(b.asked.map((a) => a.amount)).toEqual([3_100, 7_200, 6_200, 50, 1_600]);
    const changes = b.events.get(v.subscriptionId)!.filter((e) => e.type === 'subscription.changed');
    expect(changes.map((e) => (e.data as { change: { adjustment: number } }).change.adjustment)).toEqual([
      1_000, -1_500, 0,
    ]);
    expect(await b.replay(handle)).toEqual([]);
  });
});
