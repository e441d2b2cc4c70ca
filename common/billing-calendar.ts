/**
 * Calendar billing: when each period of a subscription falls due, computed from its anchor, never from
 * when the last charge happened to finish. Workflow-safe (pure; `Intl` for time zones, which the workflow
 * sandbox has, and only with the schedule's own zone, never the machine's).
 *
 *   const s = { interval: 'month', count: 1, anchor: '2026-01-31T09:00:00+03:00', timeZone: 'Europe/Moscow' };
 *   dueAt(s, 1)                  // 2026-02-28T09:00+03:00: month ends clamp to the last day
 *   dueAt(s, 2)                  // 2026-03-31T09:00+03:00: and return to the anchor day after
 *   firstDueAtOrAfter(s, t)      // { index, at }: the first due date not before t
 *
 * `day`, `week`, `month` and `year` are calendar steps of the wall clock in the schedule's time zone: a
 * daily charge at 09:00 stays at 09:00 across a daylight-saving change. A wall time a daylight-saving jump
 * skips is taken at the same distance past the jump. `second`, `minute` and `hour` are fixed lengths of
 * elapsed time, for tests and demos against a provider's test environment only (SHORT_INTERVALS).
 *
 * Every schedule names its zone (UTC when the caller names none), and its anchor's offset must be that
 * zone's at the anchor's instant: one way to say when, so that 09:00 stays 09:00 where the customer is.
 */

export const BILLING_INTERVALS = ['second', 'minute', 'hour', 'day', 'week', 'month', 'year'] as const;
export type BillingInterval = (typeof BILLING_INTERVALS)[number];
/** Periods under a day: a real charge every few seconds is never what a production plan means. */
export const SHORT_INTERVALS: readonly BillingInterval[] = ['second', 'minute', 'hour'];
export const isShortInterval = (i: BillingInterval): boolean => SHORT_INTERVALS.includes(i);
/** The zone of a schedule whose caller named none (the response shows it). */
export const DEFAULT_TIME_ZONE = 'UTC';

export interface BillingSchedule {
  interval: BillingInterval;
  /** Intervals per period: `{interval: 'month', count: 3}` bills quarterly. */
  count: number;
  /** ISO 8601 date-time with its UTC offset (`Z` or `+03:00`): the first due date, and the billing day. */
  anchor: string;
  /** IANA time zone (`Europe/Moscow`, `UTC`) the calendar steps are taken in; the anchor's offset is its. */
  timeZone: string;
}

/** Bounds shared by the API's validation and the workflow's. */
export const BILLING_LIMITS = {
  /** A period is at most about a year of seconds, minutes or hours, and at most ten years. */
  maxCount: { second: 31_622_400, minute: 527_040, hour: 8_784, day: 366, week: 53, month: 24, year: 10 },
} as const;

const ANCHOR =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3})\d*)?)?(Z|[+-]\d{2}:\d{2})$/i;

const FIXED_MS: Partial<Record<BillingInterval, number>> = { second: 1_000, minute: 60_000, hour: 3_600_000 };

interface Wall {
  y: number;
  mo: number; // 1..12
  d: number;
  h: number;
  mi: number;
  s: number;
  ms: number;
}

/** The anchor's instant and UTC offset (minutes), or undefined when it is not an ISO date-time with one. */
export function parseAnchor(anchor: string): { at: number; offsetMin: number } | undefined {
  const m = ANCHOR.exec(anchor);
  if (!m) return undefined;
  const [y, mo, d, h, mi, s] = [1, 2, 3, 4, 5, 6].map((i) => Number(m[i] ?? 0)) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const ms = Number((m[7] ?? '0').padEnd(3, '0'));
  if (mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo) || h > 23 || mi > 59 || s > 59) return undefined;
  const zone = m[8]!.toUpperCase();
  const offsetMin =
    zone === 'Z'
      ? 0
      : (zone[0] === '-' ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6)));
  return { at: Date.UTC(y, mo - 1, d, h, mi, s, ms) - offsetMin * 60_000, offsetMin };
}

/** True when `zone` is an IANA time zone this runtime knows. */
export function knownTimeZone(zone: string): boolean {
  try {
    formatter(zone);
    return true;
  } catch {
    return false;
  }
}

/** Why a schedule cannot be used (`field: rule`), or undefined when it can. */
export function scheduleProblem(s: BillingSchedule): { field: string; rule: string } | undefined {
  if (!(BILLING_INTERVALS as readonly string[]).includes(s.interval))
    return { field: 'interval', rule: `one of ${BILLING_INTERVALS.join(', ')}` };
  const max = BILLING_LIMITS.maxCount[s.interval];
  if (!Number.isSafeInteger(s.count) || s.count < 1 || s.count > max)
    return { field: 'count', rule: `an integer from 1 to ${max} for ${s.interval}` };
  const anchor = parseAnchor(s.anchor);
  if (!anchor || anchor.at < Date.UTC(2000, 0, 1) || anchor.at >= Date.UTC(2100, 0, 1))
    return { field: 'anchor', rule: 'an ISO 8601 date-time with its offset (Z or +hh:mm), 2000 to 2099' };
  if (typeof s.timeZone !== 'string' || !knownTimeZone(s.timeZone))
    return { field: 'timeZone', rule: 'an IANA time zone name, such as Europe/Moscow or UTC' };
  const zoneOffset = offsetAt(anchor.at, { iana: s.timeZone }) / 60_000;
  if (zoneOffset !== anchor.offsetMin)
    return {
      field: 'anchor',
      rule:
        `its offset ${offsetText(anchor.offsetMin)} is not ${s.timeZone}'s at that time ` +
        `(${offsetText(zoneOffset)}): write the anchor in the schedule's time zone`,
    };
  return undefined;
}

/** `+03:00`, `-05:00`, `+00:00`. */
function offsetText(min: number): string {
  const abs = Math.abs(min);
  const hh = String(Math.floor(abs / 60)).padStart(2, '0');
  const mm = String(abs % 60).padStart(2, '0');
  return `${min < 0 ? '-' : '+'}${hh}:${mm}`;
}

/** Instant `t` as an ISO 8601 date-time with the offset `zone` has then (`2027-01-31T09:00:00.000+03:00`). */
export function isoInZone(t: number, zone: string): string {
  const offsetMs = offsetAt(t, { iana: zone });
  const wall = new Date(t + offsetMs).toISOString().slice(0, 23);
  return `${wall}${offsetText(offsetMs / 60_000)}`;
}

/** The due date of period `index` (0 = the anchor) of the schedule, epoch ms. */
export function dueAt(s: BillingSchedule, index: number): number {
  const anchor = parseAnchor(s.anchor);
  if (!anchor) throw new RangeError(`not an anchor: ${s.anchor}`);
  const fixed = FIXED_MS[s.interval];
  if (fixed) return anchor.at + index * s.count * fixed;
  const zone: Zone = { iana: s.timeZone };
  const w = wallAt(anchor.at, zone);
  const steps = index * s.count;
  switch (s.interval) {
    case 'day':
    case 'week': {
      const days = steps * (s.interval === 'week' ? 7 : 1);
      const date = new Date(Date.UTC(w.y, w.mo - 1, w.d + days));
      return instantOf(
        { ...w, y: date.getUTCFullYear(), mo: date.getUTCMonth() + 1, d: date.getUTCDate() },
        zone,
      );
    }
    case 'month': {
      const months = w.mo - 1 + steps;
      const y = w.y + Math.floor(months / 12);
      const mo = (((months % 12) + 12) % 12) + 1;
      return instantOf({ ...w, y, mo, d: Math.min(w.d, daysIn(y, mo)) }, zone);
    }
    default: {
      const y = w.y + steps;
      return instantOf({ ...w, y, d: Math.min(w.d, daysIn(y, w.mo)) }, zone);
    }
  }
}

/** The first due date at or after `t` (the anchor itself when `t` is not past it). */
export function firstDueAtOrAfter(s: BillingSchedule, t: number): { index: number; at: number } {
  const start = parseAnchor(s.anchor)!.at;
  if (t <= start) return { index: 0, at: start };
  // A lower estimate from the longest a period can be, then forward: a few steps at most.
  let index = Math.max(0, Math.floor((t - start) / longestPeriodMs(s)) - 1);
  let at = dueAt(s, index);
  while (at < t) at = dueAt(s, ++index);
  return { index, at };
}

/** The first due date strictly after `t`. */
export function firstDueAfter(s: BillingSchedule, t: number): { index: number; at: number } {
  return firstDueAtOrAfter(s, t + 1);
}

function longestPeriodMs(s: BillingSchedule): number {
  const fixed = FIXED_MS[s.interval];
  if (fixed) return fixed * s.count;
  const hour = 3_600_000;
  const days = { day: 1, week: 7, month: 31, year: 366 }[s.interval as 'day' | 'week' | 'month' | 'year'];
  return (days * 24 + 2) * hour * s.count;
}

// ---- wall clock in a zone ----

type Zone = { iana: string };

function daysIn(y: number, mo: number): number {
  return new Date(Date.UTC(y, mo, 0)).getUTCDate();
}

/**
 * One formatter per time zone, made on first use. Workers load this module once for all the workflows of
 * a thread (workers/workflow-bundle-options.ts), so the cache is shared: a formatter is the same
 * whichever workflow made it.
 */
const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(zone, f);
  }
  return f;
}

/** The zone's offset from UTC at instant `t`, in ms. */
function offsetAt(t: number, zone: Zone): number {
  const parts: Record<string, number> = {};
  for (const p of formatter(zone.iana).formatToParts(new Date(t))) parts[p.type] = Number(p.value);
  const wall = Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!);
  return wall - (t - (((t % 1000) + 1000) % 1000));
}

function wallAt(t: number, zone: Zone): Wall {
  const d = new Date(t + offsetAt(t, zone));
  return {
    y: d.getUTCFullYear(),
    mo: d.getUTCMonth() + 1,
    d: d.getUTCDate(),
    h: d.getUTCHours(),
    mi: d.getUTCMinutes(),
    s: d.getUTCSeconds(),
    ms: d.getUTCMilliseconds(),
  };
}

/** The instant a wall time names in the zone: the earlier one in an overlap, past the jump in a gap. */
function instantOf(w: Wall, zone: Zone): number {
  const local = Date.UTC(w.y, w.mo - 1, w.d, w.h, w.mi, w.s, w.ms);
  const before = offsetAt(local - 86_400_000, zone);
  const after = offsetAt(local + 86_400_000, zone);
  // The earlier offset first: it names the earlier instant of an overlap.
  for (const offset of before >= after ? [before, after] : [after, before]) {
    const t = local - offset;
    if (offsetAt(t, zone) === offset) return t;
  }
  // A gap (clocks jumped forward past this wall time): the same distance past the jump.
  return local - before;
}
