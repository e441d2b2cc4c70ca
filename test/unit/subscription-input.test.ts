/**
 * One way to say when a subscription bills (client/subscription-inputs.ts): the calendar schedule only,
 * its zone UTC unless named, an anchor whose offset contradicts the zone refused naming the field, anchors
 * and trials at most two years ahead, periods under a day (and retries under a minute) only in the
 * provider's test environment; and the dunning and billing policies with their defaults.
 */
import { InputValidationError } from '../../client/errors';
import { parse } from '../../client/context';
import {
  checkForEnvironment,
  dunningInput,
  subscriptionChangeInput,
  subscriptionInput,
  subscriptionPauseInput,
} from '../../client/subscription-inputs';

const DAY = 24 * 3_600_000;
const base = {
  reference: 'sub-input-1',
  token: 'rt_1',
  amount: { amount: 1_000, currency: 'RUB' },
  schedule: { interval: 'month' },
  customer: { user_id: 'u1' },
};
const fieldsOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    if (err instanceof InputValidationError) return err.fields.map((f) => f.field);
    throw err;
  }
  throw new Error('accepted');
};
const start = (over: Record<string, unknown>) => parse(subscriptionInput, { ...base, ...over });
const inTwoYears = (extraMs: number) => new Date(Date.now() + 2 * 366 * DAY + extraMs).toISOString();

describe('a subscription says when in one way', () => {
  it('a calendar schedule is required; the millisecond interval and firstChargeAt are not fields', () => {
    expect(fieldsOf(() => start({ schedule: undefined }))).toEqual(['schedule']);
    const i = start({ intervalMs: 60_000, firstChargeAt: Date.now() });
    expect(i).not.toHaveProperty('intervalMs');
    expect(i).not.toHaveProperty('firstChargeAt');
  });

  it('no zone: UTC (the workflow shows it); an anchor must carry the offset its zone has then', () => {
    expect(start({}).schedule).toEqual({ interval: 'month', count: 1 });
    expect(start({ schedule: { interval: 'month', anchor: '2027-01-31T09:00:00Z' } }).schedule.anchor).toBe(
      '2027-01-31T09:00:00Z',
    );
    // 09:00 -05:00 without a zone is not UTC: refused, never read as "the offset is the calendar".
    expect(
      fieldsOf(() => start({ schedule: { interval: 'month', anchor: '2027-01-31T09:00:00-05:00' } })),
    ).toEqual(['schedule.anchor']);
    const ny = { interval: 'month', timeZone: 'America/New_York' };
    expect(start({ schedule: { ...ny, anchor: '2027-01-31T09:00:00-05:00' } }).schedule.timeZone).toBe(
      'America/New_York',
    );
    // New York is -04:00 in July.
    expect(fieldsOf(() => start({ schedule: { ...ny, anchor: '2027-07-31T09:00:00-05:00' } }))).toEqual([
      'schedule.anchor',
    ]);
    expect(fieldsOf(() => start({ schedule: { interval: 'month', timeZone: 'Mars/Olympus' } }))).toEqual([
      'schedule.timeZone',
    ]);
  });

  it('anchors and trials at most two years ahead', () => {
    const anchor = inTwoYears(-DAY).replace(/\.\d{3}Z$/, 'Z');
    expect(start({ schedule: { interval: 'month', anchor } }).schedule.anchor).toBe(anchor);
    expect(
      fieldsOf(() => start({ schedule: { interval: 'month', anchor: '2090-01-01T00:00:00Z' } })),
    ).toEqual(['schedule.anchor']);
    expect(start({ trialEnd: inTwoYears(-DAY) }).trialEnd).toBeGreaterThan(Date.now());
    expect(fieldsOf(() => start({ trialEnd: inTwoYears(DAY) }))).toEqual(['trialEnd']);
    expect(fieldsOf(() => start({ trialEnd: '2095-01-01T00:00:00Z' }))).toEqual(['trialEnd']);
    expect(fieldsOf(() => parse(subscriptionPauseInput, { resumeAt: inTwoYears(DAY) }))).toEqual([
      'resumeAt',
    ]);
    expect(fieldsOf(() => parse(subscriptionPauseInput, { resumeAt: '2020-01-01T00:00:00Z' }))).toEqual([
      'resumeAt',
    ]);
  });

  it("periods under a day, and retries or spacing under a minute, only in the provider's test environment", () => {
    const secondly = start({ schedule: { interval: 'second', count: 5 } });
    const dunning = parse(dunningInput, { retryDelaysMs: [500, DAY], unavailableRetryMs: 1_000 });
    const policy = { spacingMs: 100 };
    expect(() => checkForEnvironment({ schedule: secondly.schedule, dunning, policy }, true)).not.toThrow();
    expect(
      fieldsOf(() => checkForEnvironment({ schedule: secondly.schedule, dunning, policy }, false)),
    ).toEqual([
      'schedule.interval',
      'dunning.retryDelaysMs.0',
      'dunning.unavailableRetryMs',
      'policy.spacingMs',
    ]);
    for (const interval of ['day', 'week', 'month', 'year'])
      expect(() => checkForEnvironment({ schedule: { interval } as never }, false)).not.toThrow();
    const hourly = parse(subscriptionChangeInput, { schedule: { interval: 'hour' } });
    expect(fieldsOf(() => checkForEnvironment({ schedule: hourly.schedule! }, false))).toEqual([
      'schedule.interval',
    ]);
  });

  it('dunning and billing policies: defaults, and a decline code in one class only', () => {
    const i = start({});
    expect(i.dunning).toBeUndefined();
    expect(parse(dunningInput, {})).toEqual({
      retryDelaysMs: [DAY, 3 * DAY, 7 * DAY],
      onExhausted: 'cancel',
      otherDeclines: 'soft',
      unavailableRetryMs: 3_600_000,
    });
    expect(start({ policy: {} }).policy).toEqual({
      owed: 'collect_with_next',
      catchUp: 'one',
      proration: 'none',
      spacingMs: 3_600_000,
    });
    expect(fieldsOf(() => start({ policy: { owed: 'forget' } }))).toEqual(['policy.owed']);
    expect(fieldsOf(() => start({ policy: { catchUp: 'burst' } }))).toEqual(['policy.catchUp']);
    expect(
      fieldsOf(() =>
        start({ dunning: { declineCodes: { hard: ['card_declined'], soft: ['card_declined'] } } }),
      ),
    ).toEqual(['dunning.declineCodes.soft.0']);
  });

  it('a change sends something, and a schedule in it is checked the same way', () => {
    expect(fieldsOf(() => parse(subscriptionChangeInput, {}))).toEqual(['amount']);
    expect(fieldsOf(() => parse(subscriptionChangeInput, { intervalMs: 60_000 }))).toEqual(['amount']);
    expect(
      fieldsOf(() =>
        parse(subscriptionChangeInput, {
          schedule: { interval: 'day', anchor: '2027-01-01T09:00:00+01:00' },
        }),
      ),
    ).toEqual(['schedule.anchor']);
    expect(parse(subscriptionChangeInput, { amount: 5, proration: 'next_invoice' })).toEqual({
      amount: 5,
      proration: 'next_invoice',
    });
  });
});
