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
 * Moves the state to the next period: its number, the changes accepted for it, and its due date.
 * Answers the amount a change set (the workflow shows it), if any.
 */
export function advance(subscription: SubscriptionState, now: number): { amount?: number } {
  const previous = subscription.periodDueAt;
  subscription.lastDueAt = previous;
  subscription.period++;
  subscription.attempt = 0;
  delete subscription.periodAmount;
  delete subscription.chargeToken;
  const changed = takeChanges(subscription, subscription.period);
  if (changed.amount !== undefined) subscription.amount = { ...subscription.amount, amount: changed.amount };
  if (changed.schedule) {
    subscription.schedule = changed.schedule;
    subscription.periodDueAt = firstDueAtOrAfter(subscription.schedule, Math.max(previous + 1, now)).at;
  } else if (subscription.schedule)
    subscription.periodDueAt = firstDueAfter(subscription.schedule, previous).at;
  else subscription.periodDueAt = Math.max(previous + (subscription.intervalMs ?? 0), now);
  subscription.nextChargeAt = subscription.periodDueAt;
  return changed.amount !== undefined ? { amount: changed.amount } : {};
}

/** Resuming: a due time passed while paused moves to the first due date from now (or now, restarting). */
export function resumeAt(subscription: SubscriptionState, now: number, restart: boolean): void {
  if (restart && subscription.schedule) {
    subscription.schedule = { ...subscription.schedule, anchor: iso(now) };
    subscription.periodDueAt = now;
    subscription.nextChargeAt = now;
    return;
  }
  if (subscription.nextChargeAt >= now) return;
  if (subscription.attempt > 0) {
    // A dunning retry that fell due while paused is made now.
    subscription.nextChargeAt = now;
    return;
  }
  subscription.periodDueAt = subscription.schedule ? firstDueAtOrAfter(subscription.schedule, now).at : now;
  subscription.nextChargeAt = subscription.periodDueAt;
}

/** The first period a change may still apply to: the current one unless its charge has started. */
export function firstOpenPeriod(subscription: SubscriptionState, chargeStarted: boolean): number {
  return chargeStarted || subscription.attempt > 0 ? subscription.period + 1 : subscription.period;
}

/** The synchronous refusal of a bad change: names the field and the rule. */
export function checkChange(
  change: SubscriptionChange | undefined,
  subscription: SubscriptionState,
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
    if (subscription.schedule)
      throw stateConflict('this subscription bills on a calendar schedule: send schedule instead', {
        code: 'calendar_schedule',
        phase: subscription.status,
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
    resolveSchedule(
      schedule,
      subscription.schedule?.anchor ?? iso(subscription.periodDueAt),
      subscription.schedule?.timeZone,
    );
  if (fromPeriod !== undefined && (!Number.isSafeInteger(fromPeriod) || fromPeriod < 1))
    throw invalidArgument('fromPeriod', 'a positive integer');
  // Which periods have started is the subscription's state, not the request's shape: a conflict.
  if (fromPeriod !== undefined && fromPeriod < firstOpen)
    throw stateConflict(`period ${fromPeriod} has started: a change applies from period ${firstOpen} on`, {
      code: 'period_started',
      phase: subscription.status,
    });
  const queued = fromPeriod !== undefined && fromPeriod > firstOpen;
  if (queued && !(subscription.pendingChanges ?? []).some((c) => c.fromPeriod === fromPeriod))
    if ((subscription.pendingChanges ?? []).length >= MAX_PENDING_CHANGES)
      throw stateConflict(`at most ${MAX_PENDING_CHANGES} changes may wait for later periods`, {
        code: 'too_many_pending_changes',
        phase: subscription.status,
      });
}

/** Changes waiting for later periods (each is carried in the state until its period). */
export const MAX_PENDING_CHANGES = 12;

/**
 * Applies a checked change: at once when it is for the first open period (the current one not started
 * yet gets its new due date here), otherwise queued for its period. The token applies at once.
 */
export function acceptChange(
  subscription: SubscriptionState,
  change: SubscriptionChange,
  firstOpen: number,
  now: number,
): void {
  if (change.token !== undefined) subscription.token = change.token;
  if (change.intervalMs !== undefined) subscription.intervalMs = change.intervalMs;
  const schedule =
    change.schedule &&
    resolveSchedule(
      change.schedule,
      subscription.schedule?.anchor ?? iso(subscription.periodDueAt),
      subscription.schedule?.timeZone,
    );
  const fromPeriod = change.fromPeriod ?? firstOpen;
  if (fromPeriod > firstOpen) {
    const queued: PendingChange = {
      fromPeriod,
      ...(change.amount !== undefined ? { amount: change.amount } : {}),
      ...(schedule ? { schedule } : {}),
    };
    if (queued.amount === undefined && !queued.schedule) return;
    const others = (subscription.pendingChanges ?? []).filter((c) => c.fromPeriod !== fromPeriod);
    const same = (subscription.pendingChanges ?? []).find((c) => c.fromPeriod === fromPeriod);
    subscription.pendingChanges = [...others, { ...same, ...queued }].sort(
      (a, b) => a.fromPeriod - b.fromPeriod,
    );
    return;
  }
  // For the first open period: a period in flight keeps its amount (periodAmount), the next one uses it.
  if (change.amount !== undefined) subscription.amount = { ...subscription.amount, amount: change.amount };
  if (!schedule) return;
  subscription.schedule = schedule;
  delete subscription.intervalMs;
  if (firstOpen === subscription.period) {
    subscription.periodDueAt = firstDueAtOrAfter(
      schedule,
      Math.max((subscription.lastDueAt ?? now) + 1, now),
    ).at;
    subscription.nextChargeAt = subscription.periodDueAt;
  } else {
    // The period in flight keeps its due date; the next one is located from it on the new schedule.
    (subscription.pendingChanges ??= []).unshift({ fromPeriod: firstOpen, schedule });
  }
}

/** Up to `n` next due dates from the state, with the changes queued for later periods and the end. */
export function upcomingDueDates(
  input: SubscriptionInput,
  subscription: SubscriptionState,
  chargeStarted: boolean,
  now: number,
  n = 3,
): number[] {
  const copy: SubscriptionState = structuredCopy(subscription);
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
function structuredCopy(subscription: SubscriptionState): SubscriptionState {
  return {
    ...subscription,
    amount: { ...subscription.amount },
    ...(subscription.pendingChanges
      ? { pendingChanges: subscription.pendingChanges.map((c) => ({ ...c })) }
      : {}),
  };
}
