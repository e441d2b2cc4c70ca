/**
 * Due dates of calendar billing (common/billing-calendar.ts): month ends clamp and come back, leap days,
 * time zones across daylight-saving changes, finding the next due date from any time, and an anchor
 * whose offset must be its zone's.
 */
import {
  dueAt,
  firstDueAfter,
  firstDueAtOrAfter,
  isoInZone,
  parseAnchor,
  scheduleProblem,
  type BillingSchedule,
} from '../../common/billing-calendar';

const UTC = 'UTC';

const iso = (t: number) => new Date(t).toISOString();
const dates = (s: BillingSchedule, n: number) => Array.from({ length: n }, (_, i) => iso(dueAt(s, i)));

describe('billing calendar', () => {
  test('monthly on the 31st: the last day of shorter months, back to the 31st after', () => {
    const s: BillingSchedule = { interval: 'month', count: 1, anchor: '2027-01-31T09:00:00Z', timeZone: UTC };
    expect(dates(s, 6)).toEqual([
      '2027-01-31T09:00:00.000Z',
      '2027-02-28T09:00:00.000Z',
      '2027-03-31T09:00:00.000Z',
      '2027-04-30T09:00:00.000Z',
      '2027-05-31T09:00:00.000Z',
      '2027-06-30T09:00:00.000Z',
    ]);
    // A leap year's February has the 29th.
    expect(iso(dueAt({ ...s, anchor: '2028-01-31T09:00:00Z' }, 1))).toBe('2028-02-29T09:00:00.000Z');
  });

  test('quarterly and yearly; a yearly plan on 29 February', () => {
    expect(dates({ interval: 'month', count: 3, anchor: '2026-11-30T00:00:00Z', timeZone: UTC }, 4)).toEqual([
      '2026-11-30T00:00:00.000Z',
      '2027-02-28T00:00:00.000Z',
      '2027-05-30T00:00:00.000Z',
      '2027-08-30T00:00:00.000Z',
    ]);
    expect(dates({ interval: 'year', count: 1, anchor: '2028-02-29T12:00:00Z', timeZone: UTC }, 5)).toEqual([
      '2028-02-29T12:00:00.000Z',
      '2029-02-28T12:00:00.000Z',
      '2030-02-28T12:00:00.000Z',
      '2031-02-28T12:00:00.000Z',
      '2032-02-29T12:00:00.000Z',
    ]);
  });

  test('an IANA zone keeps the wall time across DST', () => {
    expect(
      iso(
        dueAt(
          { interval: 'month', count: 1, anchor: '2027-01-31T09:00:00+03:00', timeZone: 'Europe/Moscow' },
          1,
        ),
      ),
    ).toBe('2027-02-28T06:00:00.000Z');
    // Berlin moves to summer time on 29 March 2026: 09:00 local is 08:00Z before and 07:00Z after.
    const berlin: BillingSchedule = {
      interval: 'day',
      count: 1,
      anchor: '2026-03-28T09:00:00+01:00',
      timeZone: 'Europe/Berlin',
    };
    expect(dates(berlin, 3)).toEqual([
      '2026-03-28T08:00:00.000Z',
      '2026-03-29T07:00:00.000Z',
      '2026-03-30T07:00:00.000Z',
    ]);
    // 02:30 does not exist on 29 March in Berlin: taken half an hour past the jump (03:30 CEST).
    const gap: BillingSchedule = { ...berlin, anchor: '2026-03-28T02:30:00+01:00' };
    expect(iso(dueAt(gap, 1))).toBe('2026-03-29T01:30:00.000Z');
    expect(iso(dueAt(gap, 2))).toBe('2026-03-30T00:30:00.000Z');
    // 02:30 happens twice on 25 October: the first one (still summer time).
    const overlap: BillingSchedule = { ...berlin, anchor: '2026-10-24T02:30:00+02:00' };
    expect(iso(dueAt(overlap, 1))).toBe('2026-10-25T00:30:00.000Z');
  });

  test('weekly, and fixed lengths of seconds, minutes, hours', () => {
    expect(dates({ interval: 'week', count: 2, anchor: '2026-12-28T10:00:00Z', timeZone: UTC }, 3)).toEqual([
      '2026-12-28T10:00:00.000Z',
      '2027-01-11T10:00:00.000Z',
      '2027-01-25T10:00:00.000Z',
    ]);
    expect(
      dueAt({ interval: 'second', count: 90, anchor: '2026-01-01T00:00:00Z', timeZone: UTC }, 2) -
        Date.UTC(2026, 0, 1),
    ).toBe(180_000);
    expect(
      iso(
        dueAt({ interval: 'hour', count: 1, anchor: '2026-03-29T00:30:00Z', timeZone: 'Europe/Berlin' }, 2),
      ),
    ).toBe('2026-03-29T02:30:00.000Z');
  });

  test('the next due date from any time', () => {
    const s: BillingSchedule = { interval: 'month', count: 1, anchor: '2027-01-31T09:00:00Z', timeZone: UTC };
    expect(firstDueAtOrAfter(s, Date.UTC(2026, 0, 1))).toEqual({ index: 0, at: Date.UTC(2027, 0, 31, 9) });
    expect(firstDueAtOrAfter(s, Date.UTC(2027, 3, 30, 9))).toEqual({
      index: 3,
      at: Date.UTC(2027, 3, 30, 9),
    });
    expect(firstDueAfter(s, Date.UTC(2027, 3, 30, 9))).toEqual({ index: 4, at: Date.UTC(2027, 4, 31, 9) });
    // Far ahead, the estimate still lands on the right period.
    const far = firstDueAtOrAfter(s, Date.UTC(2090, 5, 15));
    expect(iso(far.at)).toBe('2090-06-30T09:00:00.000Z');
    expect(far.index).toBe((2090 - 2027) * 12 + 5);
    const yearly: BillingSchedule = {
      interval: 'year',
      count: 1,
      anchor: '2028-02-29T12:00:00Z',
      timeZone: UTC,
    };
    expect(firstDueAfter(yearly, Date.UTC(2031, 1, 28, 12))).toEqual({
      index: 4,
      at: Date.UTC(2032, 1, 29, 12),
    });
  });

  test('what a schedule must be', () => {
    const ok: BillingSchedule = {
      interval: 'month',
      count: 1,
      anchor: '2027-01-31T09:00:00+03:00',
      timeZone: 'Europe/Moscow',
    };
    expect(scheduleProblem(ok)).toBeUndefined();
    expect(scheduleProblem({ ...ok, interval: 'fortnight' as never })?.field).toBe('interval');
    expect(scheduleProblem({ ...ok, count: 0 })?.field).toBe('count');
    expect(scheduleProblem({ ...ok, count: 25 })?.rule).toMatch('1 to 24');
    expect(scheduleProblem({ ...ok, anchor: '2027-01-31T09:00:00' })?.field).toBe('anchor');
    expect(scheduleProblem({ ...ok, anchor: '2027-02-30T09:00:00Z' })?.field).toBe('anchor');
    expect(scheduleProblem({ ...ok, timeZone: 'Mars/Olympus' })?.field).toBe('timeZone');
    expect(scheduleProblem({ ...ok, timeZone: undefined as never })?.field).toBe('timeZone');
    expect(parseAnchor('2027-01-31T09:00:00.250-02:30')).toEqual({
      at: Date.UTC(2027, 0, 31, 11, 30, 0, 250),
      offsetMin: -150,
    });
  });

  test("an anchor's offset must be its zone's at that instant: one way to say when", () => {
    const ny = (anchor: string) => ({
      interval: 'month' as const,
      count: 1,
      anchor,
      timeZone: 'America/New_York',
    });
    // Winter in New York is -05:00, summer -04:00: each anchor must say the offset of its own date.
    expect(scheduleProblem(ny('2027-01-15T09:00:00-05:00'))).toBeUndefined();
    expect(scheduleProblem(ny('2027-07-15T09:00:00-04:00'))).toBeUndefined();
    expect(scheduleProblem(ny('2027-07-15T09:00:00-05:00'))).toEqual({
      field: 'anchor',
      rule: expect.stringContaining("-05:00 is not America/New_York's at that time (-04:00)"),
    });
    // UTC takes Z and +00:00, nothing else.
    const utc = (anchor: string) => ({ interval: 'day' as const, count: 1, anchor, timeZone: UTC });
    expect(scheduleProblem(utc('2027-01-15T09:00:00Z'))).toBeUndefined();
    expect(scheduleProblem(utc('2027-01-15T09:00:00+00:00'))).toBeUndefined();
    expect(scheduleProblem(utc('2027-01-15T09:00:00+03:00'))?.field).toBe('anchor');
    // 09:00 in New York stays 09:00 across the change to summer time.
    expect(dates(ny('2027-02-14T09:00:00-05:00'), 2)).toEqual([
      '2027-02-14T14:00:00.000Z',
      '2027-03-14T13:00:00.000Z',
    ]);
  });

  test('an instant written in a zone, as a default anchor is', () => {
    const t = Date.UTC(2027, 6, 15, 13, 0, 0, 250);
    expect(isoInZone(t, 'America/New_York')).toBe('2027-07-15T09:00:00.250-04:00');
    expect(isoInZone(t, UTC)).toBe('2027-07-15T13:00:00.250+00:00');
    expect(isoInZone(t, 'Asia/Kolkata')).toBe('2027-07-15T18:30:00.250+05:30');
    for (const zone of ['America/New_York', UTC, 'Asia/Kolkata'])
      expect(parseAnchor(isoInZone(t, zone))?.at).toBe(t);
  });
});
