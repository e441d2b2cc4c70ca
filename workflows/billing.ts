/**
 * When a subscription's periods fall due, and what a change does to them: the rules of its schedule over
 * the state it carries, pure, so the workflow only asks (docs/billing.md). Every due date is counted from
 * the schedule's anchor in its time zone (common/billing-calendar.ts).
 *
 *   - A late or retried charge moves no later due date: the next period is the schedule's next date
 *     after the current one (charged at once if it has passed; the catch-up policy decides what happens
 *     when several have).
 *   - Resuming keeps the billing day: the first due date from now on (no period falls due while paused),
 *     unless the caller restarts the schedule from now.
 *   - A schedule change from a period: that period falls due on the new schedule's first date after the
 *     previous due date and not before the change (it never bills for time before it); without an anchor,
 *     the new schedule keeps the billing day and time.
 *   - A change of amount or schedule in the middle of a period, with proration `next_invoice`: the unused
 *     part of the running period at its price is credited and the time to the next due date at the new
 *     terms is charged, both with the next period.
 */
import {
  DEFAULT_TIME_ZONE,
  dueAt,
  firstDueAfter,
  firstDueAtOrAfter,
  isoInZone,
  isShortInterval,
  knownTimeZone,
  parseAnchor,
  scheduleProblem,
  type BillingSchedule,
} from '../common/billing-calendar';
import type { ProrationPolicy } from '../common/billing-policy';
import { PRORATION_POLICIES } from '../common/billing-policy';
import { invalidArgument, stateConflict } from '../common/failures';
import type { SubscriptionChange } from '../common/messages';
import {
  SUBSCRIPTION_LIMITS,
  type PendingChange,
  type PeriodState,
  type ScheduleRequest,
  type SubscriptionInput,
  type SubscriptionState,
} from '../common/subscription-input';
import { iso } from './iso';

export interface ScheduleContext {
  /** Epoch ms: the anchor of a request without one. */
  defaultAnchor: number;
  /** The zone of a request without one (a change keeps the subscription's). */
  timeZone?: string;
  /** The anchor of a request without one, as written, when the request keeps that zone. */
  anchor?: string;
  testMode: boolean;
  now: number;
}

/** The schedule a request names, its anchor and zone resolved; a bad one is refused naming the field. */
export function resolveSchedule(request: ScheduleRequest, o: ScheduleContext): BillingSchedule {
  const timeZone = request.timeZone ?? o.timeZone ?? DEFAULT_TIME_ZONE;
  const schedule: BillingSchedule = {
    interval: request.interval,
    count: request.count,
    anchor: request.anchor ?? '',
    timeZone,
  };
  // A default anchor is written in the zone, so the zone is checked first.
  if (typeof timeZone !== 'string' || !knownTimeZone(timeZone))
    throw invalidArgument('schedule.timeZone', 'an IANA time zone name, such as Europe/Moscow or UTC');
  if (request.anchor === undefined)
    schedule.anchor =
      o.anchor !== undefined && timeZone === o.timeZone ? o.anchor : isoInZone(o.defaultAnchor, timeZone);
  const problem = scheduleProblem(schedule);
  if (problem) throw invalidArgument(`schedule.${problem.field}`, problem.rule);
  if (!o.testMode && isShortInterval(schedule.interval))
    throw invalidArgument(
      'schedule.interval',
      "day, week, month or year (second, minute and hour only in the provider's test environment)",
    );
  if (parseAnchor(schedule.anchor)!.at > o.now + SUBSCRIPTION_LIMITS.maxAheadMs)
    throw invalidArgument('schedule.anchor', 'at most two years ahead');
  return schedule;
}

/** The first period's due date: the anchor, or the schedule's first date from now (and the trial's end). */
export function firstDue(input: SubscriptionInput, schedule: BillingSchedule, now: number): number {
  return firstDueAtOrAfter(schedule, Math.max(now, input.trialEnd ?? now)).at;
}

/** Whether `period`, due at `dueAt`, is past the subscription's end. */
export function pastTheEnd(input: SubscriptionInput, period: number, due: number): boolean {
  return (
    (input.endAfterPeriods !== undefined && period > input.endAfterPeriods) ||
    (input.endAt !== undefined && due >= input.endAt)
  );
}

/** Takes the changes accepted for `period` (or earlier) out of the queue; what they change. */
function takeChanges(
  subscription: SubscriptionState,
  period: number,
): { amount?: number; schedule?: BillingSchedule } {
  const due = (subscription.pendingChanges ?? []).filter((c) => c.fromPeriod <= period);
  if (!due.length) return {};
  subscription.pendingChanges = subscription.pendingChanges!.filter((c) => c.fromPeriod > period);
  if (!subscription.pendingChanges.length) delete subscription.pendingChanges;
  return Object.assign(
    {},
    ...due.map(({ amount, schedule }) => ({
      ...(amount ? { amount } : {}),
      ...(schedule ? { schedule } : {}),
    })),
  );
}

/**
 * Moves the state past the period that falls due now (`subscription.period`): the next one's number, the
 * changes accepted for it, and its due date. Answers the amount a change set (the workflow shows it).
 */
export function advance(subscription: SubscriptionState): { amount?: number } {
  const previous = subscription.periodDueAt;
  subscription.lastDueAt = previous;
  subscription.lastPrice = subscription.amount.amount;
  subscription.period++;
  const changed = takeChanges(subscription, subscription.period);
  if (changed.amount !== undefined) subscription.amount = { ...subscription.amount, amount: changed.amount };
  if (changed.schedule) {
    subscription.schedule = changed.schedule;
    subscription.periodDueAt = firstDueAtOrAfter(changed.schedule, previous + 1).at;
  } else subscription.periodDueAt = firstDueAfter(subscription.schedule, previous).at;
  return changed.amount !== undefined ? { amount: changed.amount } : {};
}

/**
 * The record of the period falling due now, at the price in effect with the credit carried into it (a
 * credit larger than the price pays it whole and the rest is carried on). Does not advance.
 */
export function periodRecord(subscription: SubscriptionState): PeriodState {
  const price = subscription.amount.amount;
  const total = price + subscription.credit;
  const amount = Math.max(0, total);
  subscription.credit = total < 0 ? total : 0;
  return {
    period: subscription.period,
    dueAt: iso(subscription.periodDueAt),
    amount,
    currency: subscription.amount.currency,
    ...(amount !== price ? { adjustment: amount - price } : {}),
    status: 'due',
    attempts: 0,
  };
}

/**
 * How many periods have fallen due by `now`, counting the current one (0 when it is not due yet), up to
 * `limit` and never past the end.
 */
export function periodsDue(
  input: SubscriptionInput,
  subscription: SubscriptionState,
  now: number,
  limit: number,
): number {
  const copy = structuredCopy(subscription);
  let n = 0;
  while (n < limit && copy.periodDueAt <= now && !pastTheEnd(input, copy.period, copy.periodDueAt)) {
    n++;
    advance(copy);
  }
  return n;
}

/** Resuming: the first due date from now (none fell due while paused), or now, restarting the schedule. */
export function resumeAt(subscription: SubscriptionState, now: number, restart: boolean): void {
  if (subscription.retryAt !== undefined && subscription.retryAt < now) subscription.retryAt = now;
  if (restart) {
    subscription.schedule = {
      ...subscription.schedule,
      anchor: isoInZone(now, subscription.schedule.timeZone),
    };
    subscription.periodDueAt = now;
    return;
  }
  if (subscription.periodDueAt >= now) return;
  subscription.periodDueAt = firstDueAtOrAfter(subscription.schedule, now).at;
}

/** The synchronous refusal of a bad change: names the field and the rule. */
export function checkChange(
  change: SubscriptionChange | undefined,
  subscription: SubscriptionState,
  input: SubscriptionInput,
  now: number,
): void {
  if (!change || typeof change !== 'object')
    throw invalidArgument('(body)', 'send amount, token, customer or schedule');
  const { amount, token, customer, schedule, fromPeriod, proration } = change;
  if (amount === undefined && token === undefined && customer === undefined && schedule === undefined)
    throw invalidArgument('(body)', 'send at least one of amount, token, customer, schedule');
  if (amount !== undefined && (!Number.isSafeInteger(amount) || amount <= 0))
    throw invalidArgument('amount', 'a positive integer (minor units)');
  if (
    token !== undefined &&
    (typeof token !== 'string' || !token || token.length > SUBSCRIPTION_LIMITS.maxTokenLength)
  )
    throw invalidArgument(
      'token',
      `a non-empty string of at most ${SUBSCRIPTION_LIMITS.maxTokenLength} characters`,
    );
  if (
    customer !== undefined &&
    (typeof customer !== 'object' || customer === null || Array.isArray(customer))
  )
    throw invalidArgument('customer', "an object: the provider's user_info");
  if (proration !== undefined && !(PRORATION_POLICIES as readonly string[]).includes(proration))
    throw invalidArgument('proration', `one of ${PRORATION_POLICIES.join(', ')}`);
  if (schedule !== undefined) resolveSchedule(schedule, changeContext(subscription, input, now));
  if (fromPeriod !== undefined && (!Number.isSafeInteger(fromPeriod) || fromPeriod < 1))
    throw invalidArgument('fromPeriod', 'a positive integer');
  // Which periods have started is the subscription's state, not the request's shape: a conflict.
  if (fromPeriod !== undefined && fromPeriod < subscription.period)
    throw stateConflict(
      `period ${fromPeriod} has started: a change applies from period ${subscription.period} on`,
      { code: 'period_started', phase: subscription.status },
    );
  const queued = fromPeriod !== undefined && fromPeriod > subscription.period;
  if (queued && !(subscription.pendingChanges ?? []).some((c) => c.fromPeriod === fromPeriod))
    if ((subscription.pendingChanges ?? []).length >= MAX_PENDING_CHANGES)
      throw stateConflict(`at most ${MAX_PENDING_CHANGES} changes may wait for later periods`, {
        code: 'too_many_pending_changes',
        phase: subscription.status,
      });
}

/** Changes waiting for later periods (each is carried in the state until its period). */
export const MAX_PENDING_CHANGES = 12;

/** A change's schedule keeps the billing day and time, and the zone, unless it names others. */
function changeContext(
  subscription: SubscriptionState,
  input: SubscriptionInput,
  now: number,
): ScheduleContext {
  return {
    defaultAnchor: parseAnchor(subscription.schedule.anchor)!.at,
    timeZone: subscription.schedule.timeZone,
    anchor: subscription.schedule.anchor,
    testMode: input.testMode,
    now,
  };
}

/** What an accepted change did: the proration it carried into the next period (0: none). */
export interface ChangeResult {
  fromPeriod: number;
  adjustment: number;
}

/**
 * Applies a checked change: at once when it is for the next period to fall due (which gets its new due
 * date here), otherwise queued for its period. The token and the payer's details apply from the next
 * attempt. With proration `next_invoice`, a change at once in the middle of a period carries the
 * difference into the next period.
 */
export function acceptChange(
  subscription: SubscriptionState,
  change: SubscriptionChange,
  input: SubscriptionInput,
  now: number,
  proration: ProrationPolicy,
): ChangeResult {
  if (change.token !== undefined) subscription.token = change.token;
  if (change.customer !== undefined) subscription.customer = { ...change.customer };
  const schedule =
    change.schedule && resolveSchedule(change.schedule, changeContext(subscription, input, now));
  const fromPeriod = change.fromPeriod ?? subscription.period;
  if (fromPeriod > subscription.period) {
    const queued: PendingChange = {
      fromPeriod,
      ...(change.amount !== undefined ? { amount: change.amount } : {}),
      ...(schedule ? { schedule } : {}),
    };
    if (queued.amount !== undefined || queued.schedule) {
      const others = (subscription.pendingChanges ?? []).filter((c) => c.fromPeriod !== fromPeriod);
      const same = (subscription.pendingChanges ?? []).find((c) => c.fromPeriod === fromPeriod);
      subscription.pendingChanges = [...others, { ...same, ...queued }].sort(
        (a, b) => a.fromPeriod - b.fromPeriod,
      );
    }
    return { fromPeriod, adjustment: 0 };
  }
  const before = { due: subscription.periodDueAt, price: subscription.amount.amount };
  if (change.amount !== undefined) subscription.amount = { ...subscription.amount, amount: change.amount };
  if (schedule) {
    subscription.schedule = schedule;
    const notBefore = Math.max(now, input.trialEnd ?? now, (subscription.lastDueAt ?? -Infinity) + 1);
    subscription.periodDueAt = firstDueAtOrAfter(schedule, notBefore).at;
  }
  if (proration !== 'next_invoice' || (change.amount === undefined && !schedule))
    return { fromPeriod, adjustment: 0 };
  const adjustment = prorationOf({
    now,
    runningFrom: subscription.lastDueAt,
    runningTo: before.due,
    runningPrice: subscription.lastPrice ?? before.price,
    schedule: subscription.schedule,
    nextDue: subscription.periodDueAt,
    nextPrice: subscription.amount.amount,
  });
  subscription.credit += adjustment;
  return { fromPeriod, adjustment };
}

/**
 * The proration of a change at `now` inside the running period [runningFrom, runningTo), paid at
 * `runningPrice`: its unused part is credited, and the time from now to the next due date is charged at
 * the new price, as the share of the new schedule's period that ends on that date. Minor units, rounded
 * half away from zero; 0 when no period is running.
 */
export function prorationOf(o: {
  now: number;
  runningFrom?: number;
  runningTo: number;
  runningPrice: number;
  schedule: BillingSchedule;
  nextDue: number;
  nextPrice: number;
}): number {
  if (o.runningFrom === undefined || o.now >= o.runningTo || o.runningTo <= o.runningFrom) return 0;
  const unused = (o.runningPrice * (o.runningTo - o.now)) / (o.runningTo - o.runningFrom);
  const index = firstDueAtOrAfter(o.schedule, o.nextDue).index;
  const newFrom = dueAt(o.schedule, index - 1);
  const used = o.nextDue > o.now ? (o.nextPrice * (o.nextDue - o.now)) / (o.nextDue - newFrom) : 0;
  const raw = used - unused;
  return Math.sign(raw) * Math.round(Math.abs(raw));
}

/** Up to `n` next due dates from the state, with the changes queued for later periods and the end. */
export function upcomingDueDates(input: SubscriptionInput, subscription: SubscriptionState, n = 3): number[] {
  const copy = structuredCopy(subscription);
  const out: number[] = [];
  while (out.length < n && !pastTheEnd(input, copy.period, copy.periodDueAt)) {
    out.push(copy.periodDueAt);
    advance(copy);
  }
  return out;
}

/** What advance() touches, copied so a look ahead changes nothing. */
function structuredCopy(subscription: SubscriptionState): SubscriptionState {
  return {
    ...subscription,
    amount: { ...subscription.amount },
    ...(subscription.pendingChanges
      ? { pendingChanges: subscription.pendingChanges.map((c) => ({ ...c })) }
      : {}),
  };
}
