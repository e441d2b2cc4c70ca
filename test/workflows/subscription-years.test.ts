/**
 * Five years of a monthly subscription in minutes: the real subscription workflow on the time-skipping
 * server (test/helpers/billing-env.ts), billed on the last day of every month at 09:00 in New York from
 * 31 January 2027: month ends, 29 February 2028, sixty-odd daylight-saving changes; a soft decline
 * recovered by a retry; a charge that waits three days for a provider that cannot be reached; a period
 * unpaid after every retry, owed and collected with the next charge; a hard decline that stops billing
 * until a new token; a price change in the middle of a period, prorated. Every charge (reference, amount,
 * token, moment) and every period is checked against a table computed here, from the calendar rules
 * written out by hand (not with paysaga's calendar functions); no period is charged twice, each period is
 * a run of its own, and every run replays.
 */
import type { SubscriptionView } from '../../common/views';
import { changeSubscriptionUpdate, resumeSubscriptionUpdate, subscriptionQuery } from '../../common/messages';
import { billingEnv, typesOf, type BillingEnv } from '../helpers/billing-env';

jest.setTimeout(600_000);

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const PERIODS = 60;

// ---- the calendar, by hand ----

const leap = (y: number) => y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
const daysIn = (y: number, m: number) =>
  [31, leap(y) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1]!;
/** The day of the month of the n-th Sunday of month m (1-12) of year y. */
function nthSunday(y: number, m: number, n: number): number {
  const first = new Date(Date.UTC(y, m - 1, 1)).getUTCDay(); // 0 = Sunday
  return 1 + ((7 - first) % 7) + 7 * (n - 1);
}
/** New York's offset from UTC in hours at 09:00 local on y-m-d (US rules: summer time from the second
 *  Sunday of March to the first Sunday of November, 02:00 local). */
function newYorkOffset(y: number, m: number, d: number): number {
  const start = nthSunday(y, 3, 2);
  const end = nthSunday(y, 11, 1);
  const summer = (m > 3 && m < 11) || (m === 3 && d >= start) || (m === 11 && d < end);
  return summer ? -4 : -5;
}
/** Period k (from 1): the last day of the (k-1)-th month after January 2027, 09:00 in New York. */
function due(k: number): number {
  const index = k - 1;
  const y = 2027 + Math.floor(index / 12);
  const m = (index % 12) + 1;
  const d = Math.min(31, daysIn(y, m));
  return Date.UTC(y, m - 1, d, 9 - newYorkOffset(y, m, d));
}
const iso = (t: number) => new Date(t).toISOString();

// ---- what happens, and what each charge should be ----

const SOFT_RECOVERED = 7; // July 2027: declined, paid by the first retry
const PROVIDER_DOWN = 14; // 29 February 2028: the provider cannot be reached for three days
const OWED = 20; // August 2028: declined at every retry, owed, collected after the next charge
const HARD = 33; // September 2029: a stolen card; billing waits for a new token
const NEW_TOKEN_AT = Date.UTC(2029, 9, 15, 12); // 15 October 2029, 12:00Z: token changed, resumed
const CHANGE_AT = Date.UTC(2030, 5, 15, 12); // 15 June 2030: 1000 -> 1500, prorated
const RETRIES = [DAY, 3 * DAY, 7 * DAY];
const SPACING = HOUR;
const TAKES = MIN;

interface Expected {
  reference: string;
  amount: number;
  token: string;
  at: number;
  ok: boolean;
}

function expectedCharges(reference: string): Expected[] {
  const out: Expected[] = [];
  const ref = (k: number, attempt: number) => `${reference}:p${k}${attempt ? `:r${attempt}` : ''}`;
  // The price change on 15 June 2030 falls in the period from 31 May (41) to 30 June (42): the rest of it,
  // (30 June - 15 June) / (30 June - 31 May) of the difference, goes with period 42.
  const rest = (due(42) - CHANGE_AT) / (due(42) - due(41));
  const prorated = Math.round(500 * rest);
  const price = (k: number) => (k < 42 ? 1_000 : k === 42 ? 1_500 + prorated : 1_500);
  for (let k = 1; k <= PERIODS; k++) {
    const token = k > HARD ? 'rt_new' : 'rt_test';
    const amount = price(k);
    if (k === SOFT_RECOVERED) {
      out.push({ reference: ref(k, 0), amount, token, at: due(k), ok: false });
      out.push({ reference: ref(k, 1), amount, token, at: due(k) + TAKES + RETRIES[0]!, ok: true });
    } else if (k === OWED) {
      let at = due(k);
      out.push({ reference: ref(k, 0), amount, token, at, ok: false });
      RETRIES.forEach((r, i) => {
        at += TAKES + r;
        out.push({ reference: ref(k, i + 1), amount, token, at, ok: false });
      });
    } else if (k === HARD) {
      out.push({ reference: ref(k, 0), amount, token, at: due(k), ok: false });
    } else out.push({ reference: ref(k, 0), amount, token, at: due(k), ok: true });
    // Collected an hour after the next charge that paid.
    if (k === OWED + 1)
      out.push({ reference: ref(OWED, 4), amount: 1_000, token, at: due(k) + TAKES + SPACING, ok: true });
    if (k === HARD + 1)
      out.push({ reference: ref(HARD, 1), amount: 1_000, token, at: due(k) + TAKES + SPACING, ok: true });
  }
  return out;
}

let b: BillingEnv;
beforeAll(async () => {
  b = await billingEnv();
});
afterAll(async () => {
  await b?.close();
});

test('the hand-made calendar: month ends, a leap day, and 09:00 in New York on both sides of DST', () => {
  expect(iso(due(1))).toBe('2027-01-31T14:00:00.000Z'); // EST
  expect(iso(due(2))).toBe('2027-02-28T14:00:00.000Z');
  expect(iso(due(3))).toBe('2027-03-31T13:00:00.000Z'); // EDT from 14 March
  expect(iso(due(10))).toBe('2027-10-31T13:00:00.000Z'); // still EDT: it ends on 7 November
  expect(iso(due(11))).toBe('2027-11-30T14:00:00.000Z');
  expect(iso(due(PROVIDER_DOWN))).toBe('2028-02-29T14:00:00.000Z');
  expect(iso(due(26))).toBe('2029-02-28T14:00:00.000Z');
});

test('five years, monthly at month end in New York: every charge and every period as the table says', async () => {
  const { handle, reference } = await b.subscribe({
    amount: { amount: 1_000, currency: 'usd' },
    schedule: {
      interval: 'month',
      count: 1,
      anchor: '2027-01-31T09:00:00-05:00',
      timeZone: 'America/New_York',
    },
    endAfterPeriods: PERIODS,
    dunning: { retryDelaysMs: RETRIES, onExhausted: 'continue' },
    policy: { spacingMs: SPACING, proration: 'next_invoice' },
  });
  const ref = (k: number, attempt = 0) => `${reference}:p${k}${attempt ? `:r${attempt}` : ''}`;
  b.plan = (r) => {
    const fail = (providerCode: string) => ({ takesMs: TAKES, phase: 'failed' as const, providerCode });
    if (r === ref(SOFT_RECOVERED)) return fail('insufficient_funds');
    if (r === ref(PROVIDER_DOWN)) return { takesMs: TAKES, phase: 'succeeded', opensAfterMs: 3 * DAY };
    if ([0, 1, 2, 3].some((a) => r === ref(OWED, a))) return fail('insufficient_funds');
    if (r === ref(HARD)) return fail('fraud_suspected');
    return { takesMs: TAKES, phase: 'succeeded' };
  };

  // The stolen card: billing stops until the partner gives a new token and resumes.
  await b.skipTo(iso(NEW_TOKEN_AT));
  const stopped = await handle.query(subscriptionQuery);
  expect(stopped).toMatchObject({ status: 'past_due', paymentMethodRequired: true });
  expect(stopped.periods.filter((p) => p.status === 'owed').map((p) => p.period)).toEqual([HARD]);
  await handle.executeUpdate(changeSubscriptionUpdate, { args: [{ token: 'rt_new' }] });
  await handle.executeUpdate(resumeSubscriptionUpdate, { args: [{}] });
  // The price change mid-period.
  await b.skipTo(iso(CHANGE_AT));
  const changed = await handle.executeUpdate(changeSubscriptionUpdate, { args: [{ amount: 1_500 }] });
  const v = (await handle.result()) as SubscriptionView;

  // Every charge the provider was asked for, in order: reference, amount, token and moment (to the minute:
  // a charge opens when its timer fires, a few milliseconds after it is due).
  const expected = expectedCharges(reference);
  const minute = (t: number) => iso(t).slice(0, 16);
  expect(b.asked.map((a) => [a.reference, a.amount, a.token, minute(a.at)])).toEqual(
    expected.map((e) => [e.reference, e.amount, e.token, minute(e.at)]),
  );
  expect(changed.credit).toBe(expected.find((e) => e.reference === ref(42))!.amount - 1_500);

  // Money truth: each attempt its own reference, each period paid exactly once.
  expect(new Set(b.asked.map((a) => a.reference)).size).toBe(b.asked.length);
  const paid = expected.filter((e) => e.ok).map((e) => Number(/:p(\d+)/.exec(e.reference)![1]));
  expect([...paid].sort((x, y) => x - y)).toEqual(Array.from({ length: PERIODS }, (_, i) => i + 1));
  expect(v).toMatchObject({
    status: 'ended',
    period: PERIODS + 1,
    totals: {
      attempts: expected.length,
      succeeded: PERIODS,
      failed: expected.filter((e) => !e.ok).length,
      chargedAmount: expected.filter((e) => e.ok).reduce((sum, e) => sum + e.amount, 0),
      owedPeriods: 0,
      owedAmount: 0,
      collectedPeriods: 2,
      writtenOffPeriods: 0,
    },
  });

  // The periods: the latest as the workflow keeps them, the owed ones' story in the events.
  for (const p of v.periods) {
    expect(p.dueAt).toBe(iso(due(p.period)));
    expect(p.status).toBe('paid');
  }
  const events = b.events.get(v.subscriptionId)!;
  expect(events.map((e) => e.sequence)).toEqual(events.map((_, i) => i + 1));
  const about = (type: string) =>
    events
      .filter((e) => e.type === type)
      .map((e) => (e.data as { billingPeriod: { period: number; dueAt: string } }).billingPeriod);
  expect(about('subscription.period_owed').map((p) => [p.period, p.dueAt])).toEqual([
    [OWED, iso(due(OWED))],
    [HARD, iso(due(HARD))],
  ]);
  expect(about('subscription.period_collected').map((p) => p.period)).toEqual([OWED, HARD]);
  const charged = about('subscription.charged');
  expect(charged).toHaveLength(PERIODS - 2);
  for (const p of charged) expect(p.dueAt).toBe(iso(due(p.period)));
  const types = typesOf(b, v.subscriptionId);
  const count = (t: string) => types.filter((x) => x === t).length;
  expect({
    failed: count('subscription.charge_failed'),
    pastDue: count('subscription.past_due'),
    newToken: count('subscription.payment_method_required'),
    changed: count('subscription.changed'),
  }).toEqual({ failed: 6, pastDue: 1, newToken: 1, changed: 2 });
  expect([types[0], types.at(-1)]).toEqual(['subscription.created', 'subscription.ended']);

  // One run per billing period and per collection (62), and one more where the history of the three-day
  // wait grew long and the server suggested a new run mid-charge: short histories for years, all replay.
  const runs = await b.runs(handle);
  expect(runs.length).toBeGreaterThanOrEqual(PERIODS + 2);
  expect(runs.length).toBeLessThanOrEqual(PERIODS + 3);
  expect(v.runs).toBe(runs.length - 1);
  expect(Math.max(...runs.map((r) => r.history.events?.length ?? 0))).toBeLessThan(5_000);
  expect(await b.replay(handle)).toEqual([]);
});
