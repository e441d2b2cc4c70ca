/**
 * When a subscription's periods fall due (issue 16): the rules of its schedule over the state it carries,
 * pure, so the workflow only asks. Calendar subscriptions (`schedule`) count every due date from the
 * anchor (common/billing-calendar.ts); subscriptions started with `intervalMs` keep the older rule (the
 * next due time is the last one plus the interval, or now when that has passed).
 *
 *   - A late or retried charge moves no later due date: the next period is the schedule's next date
 *     after the current one (charged at once if it has passed: a period is never skipped while active).
 *   - Resuming keeps the billing day: the first due date from now on (periods that fell due while paused
 *     are not charged), unless the caller restarts the schedule from now.
 *   - A schedule change from a period: that period falls due on the new schedule's first date after the
 *     previous due date and not before the change (it never bills for time before it); without an
 *     anchor, the new schedule keeps the billing day and time.
 */
import {
  firstDueAfter,
  firstDueAtOrAfter,
  scheduleProblem,
  type BillingSchedule,
} from '../common/billing-calendar';
import { invalidArgument, stateConflict } from '../common/failures';
import type { SubscriptionChange } from '../common/messages';
import {
  SUBSCRIPTION_LIMITS,
  type PendingChange,
  type ScheduleRequest,
  type SubscriptionInput,
  type SubscriptionState,
} from '../common/subscription-input';
import { iso } from './iso';

/** The schedule a request names, its anchor resolved (`defaultAnchor` when it has none). */
export function resolveSchedule(
  request: ScheduleRequest,
  defaultAnchor: string,
  timeZone?: string,
): BillingSchedule {
  const zone = request.timeZone ?? timeZone;
  const schedule: BillingSchedule = {
    interval: request.interval,
    count: request.count,
    anchor: request.anchor ?? defaultAnchor,
    ...(zone ? { timeZone: zone } : {}),
  };
  const problem = scheduleProblem(schedule);
  if (problem) throw invalidArgument(`schedule.${problem.field}`, problem.rule);
  return schedule;
}

/** The first period's due date: the anchor, or the first date of the schedule from now (and the trial's end). */
export function firstDue(
  input: SubscriptionInput,
  schedule: BillingSchedule | undefined,
  now: number,
): number {
  if (!schedule) return Math.max(input.firstChargeAt ?? now, now);
  return firstDueAtOrAfter(schedule, Math.max(now, input.trialEnd ?? now)).at;
}

/** Whether `period`, due at `dueAt`, is past the subscription's end. */
export function pastTheEnd(input: SubscriptionInput, period: number, dueAt: number): boolean {
  return (
    (input.endAfterPeriods !== undefined && period > input.endAfterPeriods) ||
    (input.endAt !== undefined && dueAt >= input.endAt)
  );
}

/** Takes the changes accepted for `period` (or earlier) out of the queue; what they change. */
function takeChanges(s: SubscriptionState, period: number): { amount?: number; schedule?: BillingSchedule } {
  const due = (s.pendingChanges ?? []).filter((c) => c.fromPeriod <= period);
  if (!due.length) return {};
  s.pendingChanges = s.pendingChanges!.filter((c) => c.fromPeriod > period);
  if (!s.pendingChanges.length) delete s.pendingChanges;
  return Object.assign(
    {},
    ...due.map(({ amount, schedule }) => ({
      ...(amount ? { amount } : {}),
      ...(schedule ? { schedule } : {}),
    })),
  );
}

/**
 * Moves the state to the next period: its number, the changes accepted for it, and its due date.
 * Answers the amount a change set (the workflow shows it), if any.
 */
export function advance(s: SubscriptionState, now: number): { amount?: number } {
  const previous = s.periodDueAt;
  s.lastDueAt = previous;
  s.period++;
  s.attempt = 0;
  delete s.periodAmount;
  delete s.chargeToken;
  const changed = takeChanges(s, s.period);
  if (changed.amount !== undefined) s.amount = { ...s.amount, amount: changed.amount };
  if (changed.schedule) {
    s.schedule = changed.schedule;
    s.periodDueAt = firstDueAtOrAfter(s.schedule, Math.max(previous + 1, now)).at;
  } else if (s.schedule) s.periodDueAt = firstDueAfter(s.schedule, previous).at;
  else s.periodDueAt = Math.max(previous + (s.intervalMs ?? 0), now);
  s.nextChargeAt = s.periodDueAt;
  return changed.amount !== undefined ? { amount: changed.amount } : {};
}

/** Resuming: a due time passed while paused moves to the first due date from now (or now, restarting). */
export function resumeAt(s: SubscriptionState, now: number, restart: boolean): void {
  if (restart && s.schedule) {
    s.schedule = { ...s.schedule, anchor: iso(now) };
    s.periodDueAt = now;
    s.nextChargeAt = now;
    return;
  }
  if (s.nextChargeAt >= now) return;
  if (s.attempt > 0) {
    // A dunning retry that fell due while paused is made now.
    s.nextChargeAt = now;
    return;
  }
  s.periodDueAt = s.schedule ? firstDueAtOrAfter(s.schedule, now).at : now;
  s.nextChargeAt = s.periodDueAt;
}

/** The first period a change may still apply to: the current one unless its charge has started. */
export function firstOpenPeriod(s: SubscriptionState, chargeStarted: boolean): number {
  return chargeStarted || s.attempt > 0 ? s.period + 1 : s.period;
}

/** The synchronous refusal of a bad change: names the field and the rule. */
export function checkChange(
  change: SubscriptionChange | undefined,
  s: SubscriptionState,
  firstOpen: number,
): void {
  if (!change || typeof change !== 'object')
    throw invalidArgument('(body)', 'send amount, token, schedule or intervalMs');
  const { amount, token, intervalMs, schedule, fromPeriod } = change;
  if (amount === undefined && token === undefined && intervalMs === undefined && schedule === undefined)
    throw invalidArgument('(body)', 'send at least one of amount, token, schedule, intervalMs');
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
  if (intervalMs !== undefined) {
    if (schedule !== undefined)
      throw invalidArgument('intervalMs', 'not with schedule (send schedule instead)');
    // Whether it bills on a calendar is the subscription's state, not the request's shape: a conflict.
    if (s.schedule)
      throw stateConflict('this subscription bills on a calendar schedule: send schedule instead', {
        code: 'calendar_schedule',
        phase: s.status,
      });
    if (
      !Number.isSafeInteger(intervalMs) ||
      intervalMs < SUBSCRIPTION_LIMITS.minIntervalMs ||
      intervalMs > SUBSCRIPTION_LIMITS.maxIntervalMs
    )
      throw invalidArgument(
        'intervalMs',
        `an integer from ${SUBSCRIPTION_LIMITS.minIntervalMs} to ${SUBSCRIPTION_LIMITS.maxIntervalMs}`,
      );
    if (fromPeriod !== undefined)
      throw invalidArgument('fromPeriod', 'applies to amount and schedule, not intervalMs');
  }
  if (schedule !== undefined)
    resolveSchedule(schedule, s.schedule?.anchor ?? iso(s.periodDueAt), s.schedule?.timeZone);
  if (fromPeriod !== undefined && (!Number.isSafeInteger(fromPeriod) || fromPeriod < 1))
    throw invalidArgument('fromPeriod', 'a positive integer');
  // Which periods have started is the subscription's state, not the request's shape: a conflict.
  if (fromPeriod !== undefined && fromPeriod < firstOpen)
    throw stateConflict(`period ${fromPeriod} has started: a change applies from period ${firstOpen} on`, {
      code: 'period_started',
      phase: s.status,
    });
  const queued = fromPeriod !== undefined && fromPeriod > firstOpen;
  if (queued && !(s.pendingChanges ?? []).some((c) => c.fromPeriod === fromPeriod))
    if ((s.pendingChanges ?? []).length >= MAX_PENDING_CHANGES)
      throw stateConflict(`at most ${MAX_PENDING_CHANGES} changes may wait for later periods`, {
        code: 'too_many_pending_changes',
        phase: s.status,
      });
}

/** Changes waiting for later periods (each is carried in the state until its period). */
export const MAX_PENDING_CHANGES = 12;

/**
 * Applies a checked change: at once when it is for the first open period (the current one not started
 * yet gets its new due date here), otherwise queued for its period. The token applies at once.
 */
export function acceptChange(
  s: SubscriptionState,
  change: SubscriptionChange,
  firstOpen: number,
  now: number,
): void {
  if (change.token !== undefined) s.token = change.token;
  if (change.intervalMs !== undefined) s.intervalMs = change.intervalMs;
  const schedule =
    change.schedule &&
    resolveSchedule(change.schedule, s.schedule?.anchor ?? iso(s.periodDueAt), s.schedule?.timeZone);
  const fromPeriod = change.fromPeriod ?? firstOpen;
  if (fromPeriod > firstOpen) {
    const queued: PendingChange = {
      fromPeriod,
      ...(change.amount !== undefined ? { amount: change.amount } : {}),
      ...(schedule ? { schedule } : {}),
    };
    if (queued.amount === undefined && !queued.schedule) return;
    const others = (s.pendingChanges ?? []).filter((c) => c.fromPeriod !== fromPeriod);
    const same = (s.pendingChanges ?? []).find((c) => c.fromPeriod === fromPeriod);
    s.pendingChanges = [...others, { ...same, ...queued }].sort((a, b) => a.fromPeriod - b.fromPeriod);
    return;
  }
  // For the first open period: a period in flight keeps its amount (periodAmount), the next one uses it.
  if (change.amount !== undefined) s.amount = { ...s.amount, amount: change.amount };
  if (!schedule) return;
  s.schedule = schedule;
  delete s.intervalMs;
  if (firstOpen === s.period) {
    s.periodDueAt = firstDueAtOrAfter(schedule, Math.max((s.lastDueAt ?? now) + 1, now)).at;
    s.nextChargeAt = s.periodDueAt;
  } else {
    // The period in flight keeps its due date; the next one is located from it on the new schedule.
    (s.pendingChanges ??= []).unshift({ fromPeriod: firstOpen, schedule });
  }
}

/** Up to `n` next due dates from the state, with the changes queued for later periods and the end. */
export function upcomingDueDates(
  input: SubscriptionInput,
  s: SubscriptionState,
  chargeStarted: boolean,
  now: number,
  n = 3,
): number[] {
  const copy: SubscriptionState = structuredCopy(s);
  const out: number[] = [];
  if (!chargeStarted && copy.attempt === 0) {
    if (pastTheEnd(input, copy.period, copy.periodDueAt)) return out;
    out.push(copy.periodDueAt);
  }
  while (out.length < n) {
    advance(copy, now);
    if (pastTheEnd(input, copy.period, copy.periodDueAt)) break;
    out.push(copy.periodDueAt);
  }
  return out;
}

/** What advance() touches, copied so a look ahead changes nothing. */
function structuredCopy(s: SubscriptionState): SubscriptionState {
  return {
    ...s,
    amount: { ...s.amount },
    ...(s.pendingChanges ? { pendingChanges: s.pendingChanges.map((c) => ({ ...c })) } : {}),
  };
}
