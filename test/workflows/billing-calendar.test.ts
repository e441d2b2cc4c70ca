/**
 * Calendar billing, fast: the real subscription workflow on Temporal's time-skipping test server, with a
 * stand-in for each charge's session (test/helpers/billing-env.ts), so months and years pass in moments. Each charge's `startedAt` is the server's (skipped) time at which the workflow opened it: the
 * due date it acted on. The same rules against the sandbox in real time: test/workflows/subscription.test.ts.
 */
import { WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import { failureOf } from '../../common/failures';
import {
  changeSubscriptionUpdate,
  pauseSubscriptionUpdate,
  resumeSubscriptionUpdate,
  subscriptionQuery,
} from '../../common/messages';
import type { SubscriptionInput } from '../../common/subscription-input';
import type { SubscriptionView } from '../../common/views';
import type { ChargePlan } from '../fixtures/billing-workflows';
import { billingEnv, type BillingEnv } from '../helpers/billing-env';

jest.setTimeout(90_000);

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** How each charge goes, by its reference; default: succeeds in a minute. */
const plans = new Map<string, ChargePlan>();
let b: BillingEnv;
// A server of its own per test: its clock only moves forward, and each test starts from today.
beforeEach(async () => {
  b = await billingEnv();
  b.plan = (reference) => plans.get(reference) ?? { takesMs: 60_000, phase: 'succeeded' };
});
afterEach(async () => {
  await b?.close();
});
const events = { get: (id: string) => b.events.get(id) };

type Plan = Pick<SubscriptionInput, 'schedule'> &
  Partial<Pick<SubscriptionInput, 'endAfterPeriods' | 'endAt' | 'trialEnd'>>;

function subscribe(plan: Plan): Promise<{ handle: WorkflowHandle; reference: string }> {
  return b.subscribe({ ...plan, dunning: { retryDelaysMs: [DAY] } });
}

/** Runs the subscription to its end (time skips meanwhile); its view as it ended. */
async function ended(handle: WorkflowHandle): Promise<SubscriptionView> {
  return (await handle.result()) as SubscriptionView;
}

const view = (h: WorkflowHandle) => h.query(subscriptionQuery);
/** The due dates the charges were for; each was opened within a minute of it (its timer firing). */
const startedAt = (v: SubscriptionView) =>
  v.charges.map((c) => {
    const late = Date.parse(c.startedAt) - Date.parse(c.dueAt!);
    if (c.attempt === 0 && (late < 0 || late > 60_000))
      throw new Error(`charge ${c.period} opened ${late} ms after due`);
    return c.dueAt;
  });
/** Lets the server's clock run to `iso` (the workflow's timers fire on the way). */
const skipTo = (iso: string) => b.skipTo(iso);

test('monthly on 31 January: 28 February, 31 March, 30 April, 31 May', async () => {
  const { handle } = await subscribe({
    schedule: { interval: 'month', count: 1, anchor: '2027-01-31T09:00:00Z' },
    endAfterPeriods: 5,
  });
  expect((await view(handle)).nextDueDates).toEqual([
    '2027-01-31T09:00:00.000Z',
    '2027-02-28T09:00:00.000Z',
    '2027-03-31T09:00:00.000Z',
  ]);
  const v = await ended(handle);
  expect(startedAt(v)).toEqual([
    '2027-01-31T09:00:00.000Z',
    '2027-02-28T09:00:00.000Z',
    '2027-03-31T09:00:00.000Z',
    '2027-04-30T09:00:00.000Z',
    '2027-05-31T09:00:00.000Z',
  ]);
  expect(v).toMatchObject({
    status: 'ended',
    totals: { succeeded: 5, chargedAmount: 500 },
    nextDueDates: [],
  });
  expect(
    events
      .get(v.subscriptionId)
      ?.map((e) => e.type)
      .at(-1),
  ).toBe('subscription.ended');
});

test('yearly on 29 February: 28 February in common years, back to the 29th in leap years', async () => {
  const { handle } = await subscribe({
    schedule: { interval: 'year', count: 1, anchor: '2028-02-29T12:00:00+03:00', timeZone: 'Europe/Moscow' },
    endAfterPeriods: 3,
  });
  expect((await view(handle)).nextDueDates).toEqual([
    '2028-02-29T09:00:00.000Z',
    '2029-02-28T09:00:00.000Z',
    '2030-02-28T09:00:00.000Z',
  ]);
  expect(startedAt(await ended(handle))).toEqual([
    '2028-02-29T09:00:00.000Z',
    '2029-02-28T09:00:00.000Z',
    '2030-02-28T09:00:00.000Z',
  ]);
});

test('a charge that finished three days late moves no later due date', async () => {
  const { handle, reference } = await subscribe({
    schedule: { interval: 'month', count: 1, anchor: '2027-01-15T10:00:00Z' },
    endAfterPeriods: 4,
  });
  plans.set(`${reference}:p2`, { takesMs: 3 * DAY, phase: 'succeeded' });
  const v = await ended(handle);
  expect(startedAt(v)).toEqual([
    '2027-01-15T10:00:00.000Z',
    '2027-02-15T10:00:00.000Z',
    '2027-03-15T10:00:00.000Z',
    '2027-04-15T10:00:00.000Z',
  ]);
  expect(v.charges[1]!.finishedAt?.slice(0, 16)).toBe('2027-02-18T10:00');
});

test('a failed charge is retried, and the retry moves no later due date either', async () => {
  const { handle, reference } = await subscribe({
    schedule: { interval: 'month', count: 1, anchor: '2027-01-20T08:00:00Z' },
    endAfterPeriods: 3,
  });
  plans.set(`${reference}:p2`, { takesMs: 60_000, phase: 'failed' });
  const v = await ended(handle);
  expect(v.charges.map((c) => [c.period, c.attempt, c.startedAt.slice(0, 16), c.outcome])).toEqual([
    [1, 0, '2027-01-20T08:00', 'succeeded'],
    [2, 0, '2027-02-20T08:00', 'failed'],
    [2, 1, '2027-02-21T08:01', 'succeeded'],
    [3, 0, '2027-03-20T08:00', 'succeeded'],
  ]);
});

/** Monthly on the 10th, paused after its first charge and still paused when February's falls due. */
async function pausedOverFebruary10(): Promise<WorkflowHandle> {
  const { handle } = await subscribe({
    schedule: { interval: 'month', count: 1, anchor: '2027-01-10T09:00:00Z' },
    endAfterPeriods: 3,
  });
  await skipTo('2027-01-10T12:00:00Z');
  await handle.executeUpdate(pauseSubscriptionUpdate, { args: [{}] });
  await skipTo('2027-02-20T00:00:00Z');
  return handle;
}

test('paused across a due date: the missed period is not charged and the billing day stays', async () => {
  const handle = await pausedOverFebruary10();
  const resumed = await handle.executeUpdate(resumeSubscriptionUpdate, { args: [{}] });
  expect(resumed).toMatchObject({ status: 'active', nextChargeAt: '2027-03-10T09:00:00.000Z' });
  const v = await ended(handle);
  expect(v.charges.map((c) => [c.period, c.dueAt])).toEqual([
    [1, '2027-01-10T09:00:00.000Z'],
    [2, '2027-03-10T09:00:00.000Z'],
    [3, '2027-04-10T09:00:00.000Z'],
  ]);
});

test('resumed with restart: charged at once and billed from then on', async () => {
  const handle = await pausedOverFebruary10();
  const resumed = await handle.executeUpdate(resumeSubscriptionUpdate, { args: [{ restart: true }] });
  expect(resumed.schedule?.anchor.slice(0, 16)).toBe('2027-02-20T00:00');
  expect(startedAt(await ended(handle)).map((t) => t?.slice(0, 16))).toEqual([
    '2027-01-10T09:00',
    '2027-02-20T00:00',
    '2027-03-20T00:00',
  ]);
});

test('a change from a given period: amount and schedule from period 3, billing day kept', async () => {
  const { handle } = await subscribe({
    schedule: { interval: 'month', count: 1, anchor: '2027-01-05T09:00:00Z' },
    endAfterPeriods: 4,
  });
  await skipTo('2027-01-05T12:00:00Z');
  // Period 2 is the first not started: a change for an earlier one conflicts with the subscription's state.
  const early = await handle
    .executeUpdate(changeSubscriptionUpdate, { args: [{ amount: 200, fromPeriod: 1 }] })
    .catch((e: unknown) => e);
  expect(early).toBeInstanceOf(WorkflowUpdateFailedError);
  expect(failureOf(early)).toMatchObject({ type: 'StateConflict', details: { code: 'period_started' } });

  const changed = await handle.executeUpdate(changeSubscriptionUpdate, {
    args: [{ amount: 200, schedule: { interval: 'month', count: 2 }, fromPeriod: 3 }],
  });
  expect(changed.amount.amount).toBe(100);
  expect(changed.pendingChanges).toEqual([
    {
      fromPeriod: 3,
      amount: 200,
      schedule: { interval: 'month', count: 2, anchor: '2027-01-05T09:00:00Z', timeZone: 'UTC' },
    },
  ]);
  expect(changed.nextDueDates).toEqual([
    '2027-02-05T09:00:00.000Z',
    '2027-03-05T09:00:00.000Z',
    '2027-05-05T09:00:00.000Z',
  ]);
  const v = await ended(handle);
  expect(v.charges.map((c) => [c.period, c.dueAt, c.amount])).toEqual([
    [1, '2027-01-05T09:00:00.000Z', 100],
    [2, '2027-02-05T09:00:00.000Z', 100],
    [3, '2027-03-05T09:00:00.000Z', 200],
    [4, '2027-05-05T09:00:00.000Z', 200],
  ]);
  expect(v).toMatchObject({ amount: { amount: 200 }, schedule: { count: 2 } });
  expect(v.pendingChanges).toBeUndefined();
});

test('a plan with an end date and a trial', async () => {
  const { handle } = await subscribe({
    schedule: { interval: 'week', count: 1, anchor: '2027-03-01T07:00:00Z' },
    trialEnd: Date.parse('2027-03-10T00:00:00Z'),
    endAt: Date.parse('2027-03-29T07:00:00Z'),
  });
  const first = await view(handle);
  expect(first).toMatchObject({ trialEnd: '2027-03-10T00:00:00.000Z', endAt: '2027-03-29T07:00:00.000Z' });
  expect(first.nextDueDates).toEqual(['2027-03-15T07:00:00.000Z', '2027-03-22T07:00:00.000Z']);
  const v = await ended(handle);
  expect(startedAt(v)).toEqual(['2027-03-15T07:00:00.000Z', '2027-03-22T07:00:00.000Z']);
  expect(v.status).toBe('ended');
  // Nothing can be done to an ended subscription.
  const late = await handle.executeUpdate(pauseSubscriptionUpdate, { args: [{}] }).catch((e: unknown) => e);
  expect(late).toBeInstanceOf(Error);
});
