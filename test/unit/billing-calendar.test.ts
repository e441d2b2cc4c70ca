/**
 * Due dates of calendar billing (common/billing-calendar.ts): month ends clamp and come back, leap days,
 * time zones across daylight-saving changes, and finding the next due date from any time.
 */
import {
  dueAt,
  firstDueAfter,
  firstDueAtOrAfter,
  parseAnchor,
  scheduleProblem,
  type BillingSchedule,
} from '../../common/billing-calendar';

const iso = (t: number) => new Date(t).toISOString();
const dates = (s: BillingSchedule, n: number) => Array.from({ length: n }, (_, i) => iso(dueAt(s, i)));

describe('billing calendar', () => {
  test('monthly on the 31st: the last day of shorter months, back to the 31st after', () => {
    const s: BillingSchedule = { interval: 'month', count: 1, anchor: '2027-01-31T09:00:00Z' };
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
    expect(dates({ interval: 'month', count: 3, anchor: '2026-11-30T00:00:00Z' }, 4)).toEqual([
      '2026-11-30T00:00:00.000Z',
      '2027-02-28T00:00:00.000Z',
      '2027-05-30T00:00:00.000Z',
      '2027-08-30T00:00:00.000Z',
    ]);
    expect(dates({ interval: 'year', count: 1, anchor: '2028-02-29T12:00:00Z' }, 5)).toEqual([
      '2028-02-29T12:00:00.000Z',
      '2029-02-28T12:00:00.000Z',
      '2030-02-28T12:00:00.000Z',
      '2031-02-28T12:00:00.000Z',
      '2032-02-29T12:00:00.000Z',
    ]);
  });

  test("the anchor's offset is the zone without timeZone; an IANA zone keeps the wall time across DST", () => {
    // Moscow has no daylight saving: the offset and the zone agree.
    expect(iso(dueAt({ interval: 'month', count: 1, anchor: '2027-01-31T09:00:00+03:00' }, 1))).toBe(
      '2027-02-28T06:00:00.000Z',
    );
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
    // Without the zone, the fixed offset keeps 08:00Z (10:00 in Berlin's summer).
    expect(iso(dueAt({ ...berlin, timeZone: undefined }, 2))).toBe('2026-03-30T08:00:00.000Z');
    // 02:30 does not exist on 29 March in Berlin: taken half an hour past the jump (03:30 CEST).
    const gap: BillingSchedule = { ...berlin, anchor: '2026-03-28T02:30:00+01:00' };
    expect(iso(dueAt(gap, 1))).toBe('2026-03-29T01:30:00.000Z');
    expect(iso(dueAt(gap, 2))).toBe('2026-03-30T00:30:00.000Z');
    // 02:30 happens twice on 25 October: the first one (still summer time).
    const overlap: BillingSchedule = { ...berlin, anchor: '2026-10-24T02:30:00+02:00' };
    expect(iso(dueAt(overlap, 1))).toBe('2026-10-25T00:30:00.000Z');
  });

  test('weekly, and fixed lengths of seconds, minutes, hours', () => {
    expect(dates({ interval: 'week', count: 2, anchor: '2026-12-28T10:00:00Z' }, 3)).toEqual([
      '2026-12-28T10:00:00.000Z',
      '2027-01-11T10:00:00.000Z',
      '2027-01-25T10:00:00.000Z',
    ]);
    expect(
      dueAt({ interval: 'second', count: 90, anchor: '2026-01-01T00:00:00Z' }, 2) - Date.UTC(2026, 0, 1),
    ).toBe(180_000);
    expect(
      iso(
        dueAt({ interval: 'hour', count: 1, anchor: '2026-03-29T00:30:00Z', timeZone: 'Europe/Berlin' }, 2),
      ),
    ).toBe('2026-03-29T02:30:00.000Z');
  });

  test('the next due date from any time', () => {
    const s: BillingSchedule = { interval: 'month', count: 1, anchor: '2027-01-31T09:00:00Z' };
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
    const yearly: BillingSchedule = { interval: 'year', count: 1, anchor: '2028-02-29T12:00:00Z' };
    expect(firstDueAfter(yearly, Date.UTC(2031, 1, 28, 12))).toEqual({
      index: 4,
      at: Date.UTC(2032, 1, 29, 12),
    });
  });

  test('what a schedule must be', () => {
    const ok: BillingSchedule = { interval: 'month', count: 1, anchor: '2027-01-31T09:00:00+03:00' };
    expect(scheduleProblem(ok)).toBeUndefined();
    expect(scheduleProblem({ ...ok, interval: 'fortnight' as never })?.field).toBe('interval');
    expect(scheduleProblem({ ...ok, count: 0 })?.field).toBe('count');
    expect(scheduleProblem({ ...ok, count: 25 })?.rule).toMatch('1 to 24');
    expect(scheduleProblem({ ...ok, anchor: '2027-01-31T09:00:00' })?.field).toBe('anchor');
    expect(scheduleProblem({ ...ok, anchor: '2027-02-30T09:00:00Z' })?.field).toBe('anchor');
    expect(scheduleProblem({ ...ok, timeZone: 'Mars/Olympus' })?.field).toBe('timeZone');
    expect(parseAnchor('2027-01-31T09:00:00.250-02:30')).toEqual({
      at: Date.UTC(2027, 0, 31, 11, 30, 0, 250),
      offsetMin: -150,
    });
  });
});
