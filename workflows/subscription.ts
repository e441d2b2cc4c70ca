/**
 * Recurring billing (docs/billing.md): one long-lived workflow per subscription, id `sub-<reference>`, one
 * run per billing period.
 *
 *   wait (durable timer) until the next period falls due (several due at once: the catch-up policy)
 *   -> charge it: a session for (period, attempt), opened under paysaga's own reference
 *      `<reference>:p<period>[:r<attempt>]` (an activity: workers/charge-activities.ts), so that no retry,
 *      crash, reset or new build ever opens a second session for the same attempt
 *   -> follow it to the provider's result (the session says so; the provider's state decides when late)
 *   -> paid; or a decline, classed from the provider's error code: soft (retried on the dunning schedule),
 *      hard (no retry: the payment method must change), provider unavailable (never a decline: tried
 *      again); a period whose retries are spent is owed: a record, collected with the next successful
 *      charge or by the partner, or written off, per the subscription's policy
 *   -> the period is settled: continue as new, carrying only the state, on the build now current
 *
 * A period is charged at most once: each attempt has its own reference, at most one charge is in flight,
 * and a period paid is never attempted again. An attempt fails only once the provider says so: an outage
 * delays it (the subscription shows `attention`), it never counts as a decline.
 *
 * Signals: sessionSettled (from a charge's session). Queries: subscription.
 * Updates: cancelSubscription, pauseSubscription, resumeSubscription, changeSubscription, collectOwed,
 * writeOffOwed.
 */
import * as wf from '@temporalio/workflow';
import { BILLING_POLICY_LIMITS, classify, type DeclineClass } from '../common/billing-policy';
import { nextEvent, type SubscriptionEventType } from '../common/events';
import {
  FAILURE_TYPES,
  failureOf,
  invalidArgument,
  stateConflict,
  type ProviderRefusal,
  type StateConflictCode,
} from '../common/failures';
import type { SubscriptionStatus } from '../common/kinds';
import { nextPollWait } from '../common/settings';
import {
  cancelSubscriptionUpdate,
  changeSubscriptionUpdate,
  collectOwedUpdate,
  pauseSubscriptionUpdate,
  resumeSubscriptionUpdate,
  sessionSettledSignal,
  subscriptionQuery,
  writeOffOwedUpdate,
  type SessionSettled,
  type SubscriptionChange,
} from '../common/messages';
import {
  checkArgument,
  collectRequest,
  parseMessage,
  pauseRequest,
  resumeRequest,
  sessionSettled,
  subscriptionCancelRequest,
  subscriptionChange,
  writeOffRequest,
} from '../common/message-schemas';
import { reason, reasonText, type AttentionReason, type EndReason } from '../common/reasons';
import { AmountMinor, CreatedAt, NeedsAttention, PaymentStatus } from '../common/search-attributes';
import {
  SUBSCRIPTION_LIMITS,
  type PeriodState,
  type SubscriptionInput,
  type SubscriptionState,
} from '../common/subscription-input';
import {
  noSubscriptionTotals,
  type BillingPeriodView,
  type ChargeRecord,
  type SubscriptionView,
} from '../common/views';
import { failureReason, phaseOf } from '../common/snapshot';
import {
  acceptChange,
  advance,
  checkChange,
  firstDue,
  pastTheEnd,
  periodRecord,
  periodsDue,
  resolveSchedule,
  resumeAt,
  upcomingDueDates,
  type ChangeResult,
} from './billing';
import type { ChargeActivities } from '../activities/types';
import { untilAnswered, provider } from './calls';
import { SubscriptionRecorder } from './subscription-recorder';
import * as attention from './attention';
import { waitUntil } from './wait';
import { iso } from './iso';
import { HISTORY_LIMITS, historyLong } from './history';

/** The charge history the workflow keeps (and carries into the next run); totals count them all. */
export const MAX_CHARGES_KEPT = 50;
/** Settled periods the workflow keeps besides the open and owed ones (the store keeps them all). */
export const SETTLED_PERIODS_KEPT = 24;
/** How many periods one catch-up looks at: more than any outage a subscription lives through. */
const MAX_CATCH_UP = 10_000;
/**
 * Opening a charge is a provider call under the charge's reference (workers/charge-activities.ts): a few
 * quick attempts, then the workflow's own backoff (untilAnswered), showing attention meanwhile.
 */
const charges = wf.proxyActivities<ChargeActivities>({
  startToCloseTimeout: '45s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 6 },
});
/** How long an Update's answer waits for its change to be stored. */
const STORED_WITHIN_MS = 10_000;
/** How often a subscription waiting for a far period looks for a new build to move to. */
const LOOK_FOR_NEW_BUILD_MS = 24 * 3_600_000;

/** The code a refused request answers with, for each request. */
const NOT_ABLE = {
  cancel: 'not_cancelable',
  pause: 'not_pauseable',
  resume: 'not_resumeable',
  change: 'not_changeable',
} as const satisfies Record<string, StateConflictCode>;

interface Outcome {
  ok: boolean;
  sessionId: string;
  reason?: EndReason;
}

/** What the subscription does next, and when (epoch ms). */
interface Work {
  at: number;
  kind: 'due' | 'retry' | 'collect' | 'resume' | 'cancel_at_period_end';
}

export async function subscriptionWorkflow(
  input: SubscriptionInput,
  carried?: SubscriptionState,
): Promise<SubscriptionView> {
  return new Subscription(input, carried ?? firstState(input)).run();
}

function firstState(input: SubscriptionInput): SubscriptionState {
  const now = Date.now();
  // The API refuses a bad schedule; a workflow started some other way fails here, once.
  const schedule = resolveSchedule(input.schedule, { defaultAnchor: now, testMode: input.testMode, now });
  return {
    status: 'active',
    amount: { ...input.amount },
    token: input.token,
    schedule,
    period: 1,
    periodDueAt: firstDue(input, schedule, now),
    credit: 0,
    collecting: [],
    periods: [],
    charges: [],
    totals: noSubscriptionTotals(),
    eventSequence: 0,
    runs: 0,
    // The CreatedAt search attribute it was started with, so that a search by time finds what the view says.
    createdAt: iso(wf.workflowInfo().typedSearchAttributes.get(CreatedAt)?.getTime() ?? now),
  };
}

class Subscription {
  /** Bumped by every accepted Update: a waiting loop wakes up and looks again. */
  private version = 0;
  /** A period (or a collection) settled in this run: the run ends here, and the next one begins. */
  private boundary = false;
  /** Every change is written to the store (with its events). */
  private readonly recorder: SubscriptionRecorder;
  /** Results sessions reported (a session may report before its reference said which session it is). */
  private readonly settled = new Map<string, SessionSettled>();

  constructor(
    readonly input: SubscriptionInput,
    readonly state: SubscriptionState,
  ) {
    this.recorder = new SubscriptionRecorder(
      () => ({
        view: this.view(),
        ...(typeof input.customer?.user_id === 'string' ? { customerId: input.customer.user_id } : {}),
      }),
      state,
    );
    if (state.eventSequence === 0) {
      this.announce('subscription.created');
      this.endWhenDone(); // a first period already past the end (endAt before it)
    }
    this.handleMessages();
  }

  async run(): Promise<SubscriptionView> {
    for (;;) {
      if (this.state.charging) {
        this.settle(await this.followCharge());
        continue;
      }
      // Canceled while another charge was in flight (a collection), or a charge's result asked for a
      // retry after the cancel: the period still open is owed now, as a cancel does at once.
      if (this.over() && this.state.open !== undefined) this.oweOpenPeriod();
      if (this.done()) return this.close();
      if (this.boundary) await this.continueAsNew();
      const work = this.nextWork();
      const wait = work ? work.at - Date.now() : undefined;
      if (wait === undefined || wait > 0) await this.untilChanged(wait);
      else this.perform(work!);
    }
  }

  // ---- what comes next ----

  /** Canceled or ended: nothing more falls due (owed periods may still be collected or written off). */
  private over(): boolean {
    return this.state.status === 'canceled' || this.state.status === 'ended';
  }

  /** Over, nothing in flight, queued or owed: the workflow ends. */
  private done(): boolean {
    const s = this.state;
    return this.over() && s.open === undefined && !s.collecting.length && !this.owed().length;
  }

  private owed(): PeriodState[] {
    return this.state.periods.filter((p) => p.status === 'owed');
  }

  /** The earliest thing to do (a retry before a due period before a collection when at the same time). */
  private nextWork(): Work | undefined {
    const s = this.state;
    const works: Work[] = [];
    if (s.status === 'paused' && s.pausedUntil !== undefined)
      works.push({ at: s.pausedUntil, kind: 'resume' });
    if (s.cancelation?.atPeriodEnd && !this.over() && s.status !== 'active' && s.open === undefined)
      works.push({ at: s.periodDueAt, kind: 'cancel_at_period_end' });
    if (s.status === 'active') {
      if (s.open !== undefined) {
        if (s.retryAt !== undefined) works.push({ at: s.retryAt, kind: 'retry' });
      } else works.push({ at: this.dueWorkAt(), kind: 'due' });
    }
    if (s.collecting.length) works.push({ at: this.collectAt(), kind: 'collect' });
    return works.reduce<Work | undefined>((first, w) => (!first || w.at < first.at ? w : first), undefined);
  }

  /** A period due before the last charge ended is a catch-up: spaced after it (catch-up `all`). */
  private dueWorkAt(): number {
    const s = this.state;
    const ended = s.lastChargeEndedAt;
    if (this.input.policy.catchUp === 'all' && ended !== undefined && s.periodDueAt < ended)
      return Math.max(s.periodDueAt, ended + this.input.policy.spacingMs);
    return s.periodDueAt;
  }

  /** A collection waits the spacing after the last charge (and a provider-unavailable wait). */
  private collectAt(): number {
    const s = this.state;
    const spaced = s.lastChargeEndedAt !== undefined ? s.lastChargeEndedAt + this.input.policy.spacingMs : 0;
    return Math.max(spaced, s.collectAfter ?? 0);
  }

  private perform(work: Work): void {
    switch (work.kind) {
      case 'resume':
        this.resume(false);
        return;
      case 'cancel_at_period_end':
        this.cancelNow(this.state.cancelation?.reason ?? reason('canceled_by_partner'), true);
        return;
      case 'retry':
        this.openCharge(this.state.open!, 'retry');
        return;
      case 'collect':
        this.openCharge(this.state.collecting[0]!, 'collect');
        return;
      case 'due':
        this.takeDue();
        return;
    }
  }

  /** Sleeps on a durable timer (none: until an Update); continues as new first when the history is long. */
  private async untilChanged(ms: number | undefined): Promise<void> {
    if (historyLong(HISTORY_LIMITS.subscription) || this.movesToNewBuild()) await this.continueAsNew();
    const seen = this.version;
    // A day at most: a subscription waiting for a far period looks once a day whether a new build has
    // been made current, and moves to it (so the build it runs on drains within a day of a release).
    await waitUntil(() => this.version !== seen, Math.min(ms ?? Infinity, LOOK_FOR_NEW_BUILD_MS));
  }

  /** Between periods, with nothing in flight, and a new build is the one Temporal routes new work to. */
  private movesToNewBuild(): boolean {
    const s = this.state;
    return !s.charging && s.open === undefined && wf.workflowInfo().targetWorkerDeploymentVersionChanged;
  }

  /**
   * The next run, with the state only. Between periods (nothing in flight, no period open) it moves to the
   * build Temporal now routes the subscription to; otherwise (a history grown long while the provider was
   * away, or during a period's dunning) it stays on its own.
   */
  private async continueAsNew(): Promise<never> {
    // The store holds what the next run carries (its run count too).
    this.state.runs++;
    await this.settledDown();
    const next = wf.makeContinueAsNewFunc<typeof subscriptionWorkflow>(
      this.movesToNewBuild() ? { initialVersioningBehavior: 'AUTO_UPGRADE' } : {},
    );
    return next(this.input, this.state);
  }

  /**
   * Every Update answered and the subscription as it is now in the store: an Update that came while the
   * last record was written is answered (and recorded) too before the run ends.
   */
  private async settledDown(): Promise<void> {
    do {
      await wf.condition(wf.allHandlersFinished);
      this.recorder.record();
      await this.recorder.flushed();
    } while (!wf.allHandlersFinished());
  }

  // ---- periods ----

  private periodOf(period: number): PeriodState {
    const p = this.state.periods.find((x) => x.period === period);
    if (!p) throw new Error(`period ${period} is not carried`);
    return p;
  }

  /**
   * The next period has fallen due: canceled at the period end, past the end, caught up (catch-up `one`:
   * every period but the latest due is missed, owed or written off per policy), or charged.
   */
  private takeDue(): void {
    const s = this.state;
    if (s.cancelation?.atPeriodEnd) {
      this.cancelNow(s.cancelation.reason ?? reason('canceled_by_partner'), true);
      return;
    }
    if (this.endWhenDone()) return;
    if (this.input.policy.catchUp === 'one') {
      const due = periodsDue(this.input, s, Date.now(), MAX_CATCH_UP);
      for (let k = 1; k < due; k++) {
        this.owe(this.takePeriod());
        if (s.status !== 'active') {
          this.boundary = true;
          return;
        }
      }
    }
    const period = this.takePeriod();
    if (period.amount === 0) {
      // The credit carried into it pays it whole.
      period.status = 'paid';
      period.paidAt = iso(Date.now());
      this.announce('subscription.charged', { billingPeriod: period });
      this.periodSettled();
      return;
    }
    s.open = period.period;
    delete s.retryAt;
    this.openCharge(period.period, 'due');
  }

  /** The period falling due now, recorded, and the state moved to the next one. */
  private takePeriod(): PeriodState {
    const s = this.state;
    const period = periodRecord(s);
    s.periods.push(period);
    const changed = advance(s);
    if (changed.amount !== undefined)
      wf.upsertSearchAttributes([{ key: AmountMinor, value: changed.amount }]);
    return period;
  }

  /** A period nobody paid: owed, or written off when the policy says so. Never dropped unsaid. */
  private owe(period: PeriodState): void {
    const s = this.state;
    const now = iso(Date.now());
    if (this.input.policy.owed === 'write_off') {
      period.status = 'written_off';
      period.writtenOffAt = now;
      period.writeOffReason = 'the subscription writes off what is not paid (owed policy write_off)';
      s.totals.writtenOffPeriods++;
      s.totals.writtenOffAmount += period.amount;
      this.announce('subscription.period_written_off', { billingPeriod: period });
      return;
    }
    period.status = 'owed';
    period.owedSince = now;
    s.totals.owedPeriods++;
    s.totals.owedAmount += period.amount;
    this.announce('subscription.period_owed', { billingPeriod: period });
    if (s.totals.owedPeriods >= BILLING_POLICY_LIMITS.maxOwed && s.status === 'active') {
      // Owing more would be a debt nobody looks at: billing stops until the partner settles them.
      this.setStatus('past_due');
      this.announce('subscription.past_due');
    }
  }

  /** The open period is settled (paid, owed or written off): the run ends at the next safe point. */
  private periodSettled(): void {
    const s = this.state;
    delete s.open;
    delete s.retryAt;
    delete s.dunning;
    delete s.unavailableWaitMs;
    this.keepPeriods();
    this.boundary = true;
    this.endWhenDone();
  }

  /** Owed and open periods stay; of the others, the latest SETTLED_PERIODS_KEPT. */
  private keepPeriods(): void {
    const s = this.state;
    const settled = s.periods.filter((p) => p.status === 'paid' || p.status === 'written_off');
    const drop = new Set(settled.slice(0, Math.max(0, settled.length - SETTLED_PERIODS_KEPT)));
    if (drop.size) s.periods = s.periods.filter((p) => !drop.has(p));
  }

  /** Past its last period (endAfterPeriods, endAt), an active or past-due subscription ends. */
  private endWhenDone(): boolean {
    const s = this.state;
    if (this.over() || s.open !== undefined || !pastTheEnd(this.input, s.period, s.periodDueAt)) return false;
    this.setStatus('ended');
    this.version++;
    this.announce('subscription.ended');
    return true;
  }

  // ---- charging ----

  /** `<reference>:p<period>[:r<attempt>]`: paysaga's reference of an attempt. */
  private referenceOf(period: number, attempt: number): string {
    return `${this.input.reference}:p${period}${attempt ? `:r${attempt}` : ''}`;
  }

  /** Records the attempt; followCharge opens its session and follows it. */
  private openCharge(period: number, kind: ChargeRecord['kind']): void {
    const s = this.state;
    const p = this.periodOf(period);
    const attempt = p.attempts++;
    if (p.status === 'due') p.status = 'attempted';
    const money = { amount: p.amount, currency: p.currency };
    s.charging = {
      period,
      attempt,
      kind,
      amount: money,
      token: s.token,
      customer: s.customer ?? this.input.customer,
    };
    s.charges.push({
      period,
      attempt,
      kind,
      sessionId: '',
      reference: this.referenceOf(period, attempt),
      amount: money.amount,
      currency: money.currency,
      dueAt: p.dueAt,
      startedAt: iso(Date.now()),
      outcome: 'pending',
    });
    if (s.charges.length > MAX_CHARGES_KEPT) s.charges.splice(0, s.charges.length - MAX_CHARGES_KEPT);
    s.totals.attempts++;
    this.recorder.record();
  }

  /** The last charge record, when it has no outcome yet. */
  private current(): ChargeRecord | undefined {
    const last = this.state.charges.at(-1);
    return last?.outcome === 'pending' ? last : undefined;
  }

  /**
   * The attempt's session, opened under its own reference (`<reference>:p<period>[:r<attempt>]`) as any
   * session is: asked again after a retry, a crash, a new run or a new build, paysaga answers the session
   * it opened, never a second one. The provider refusing it for good is the attempt's failure; a provider
   * that cannot be reached is waited out (attention), never counted.
   */
  private async openSession(record: ChargeRecord): Promise<Outcome | undefined> {
    const c = this.state.charging!;
    const customer = c.customer;
    try {
      const { sessionId } = await untilAnswered(
        () =>
          charges.openCharge({
            subscriptionId: this.input.subscriptionId,
            period: c.period,
            attempt: c.attempt,
            reference: record.reference,
            money: c.amount,
            // A merchant-initiated charge is one init/checkout by the recurring token (the spec's sequence).
            body: {
              payment_info: { type: 'recurring_token_info', recurring_token_info: { token: c.token } },
              sum_info: { sum: c.amount.amount, currency_code: c.amount.currency },
              user_info: customer as never,
            },
            settings: this.input.settings,
            ...(this.input.submerchantId ? { submerchantId: this.input.submerchantId } : {}),
            ...(this.input.projectId ? { projectId: this.input.projectId } : {}),
            ...(typeof customer.user_id === 'string' ? { customerId: customer.user_id } : {}),
          }),
        {
          pauseMs: this.input.settings.polling.initialMs,
          maxMs: this.input.settings.deadlines.startMs,
          onTrouble: (message) =>
            this.needsAttention(reason('charge_not_open', message, { subject: record.reference })),
          between: async () => {
            if (historyLong(HISTORY_LIMITS.subscription)) await this.continueAsNew();
          },
        },
      );
      record.sessionId = sessionId;
      this.recorder.record();
      return undefined;
    } catch (err) {
      const f = failureOf(err);
      if (f?.type !== FAILURE_TYPES.providerRefused) throw err;
      const refusal = f.details as Partial<ProviderRefusal> | undefined;
      return {
        ok: false,
        sessionId: '',
        reason: reason('charge_refused', refusal?.description ?? f.message, {
          providerCode: typeof refusal?.errorCode === 'string' ? refusal.errorCode : undefined,
        }),
      };
    }
  }

  /**
   * Follows the charge in flight to the provider's result: the session signals it; when it is late the
   * provider's state decides. An unreachable provider is shown (attention) and waited out, never counted
   * as a failed attempt.
   */
  private async followCharge(): Promise<Outcome> {
    const record = this.current()!;
    const { polling } = this.input.settings;
    if (!record.sessionId) {
      const refused = await this.openSession(record);
      if (refused) {
        this.clearAttention();
        return refused;
      }
    }
    let wait = polling.webhooks ? polling.lateAfterMs : polling.initialMs;
    const reported = () => this.settled.get(record.sessionId);
    for (;;) {
      if (await this.restOrContinue(() => reported() !== undefined, wait)) break;
      const state = await untilAnswered(() => provider.getState({ sessionId: record.sessionId }), {
        pauseMs: polling.initialMs,
        maxMs: polling.maxMs,
        retryRefusals: true,
        onTrouble: (message) =>
          this.needsAttention(reason('provider_call_failing', message, { subject: record.sessionId })),
        between: async () => {
          if (historyLong(HISTORY_LIMITS.subscription)) await this.continueAsNew();
        },
      });
      const phase = phaseOf(state);
      if (phase === 'succeeded' || phase === 'failed' || phase === 'canceled') {
        const code = failureReason(state);
        if (!reported())
          this.settled.set(record.sessionId, {
            sessionId: record.sessionId,
            phase,
            ...(code && phase !== 'succeeded'
              ? { reason: reason('provider_error', undefined, { providerCode: code }) }
              : {}),
          });
        break;
      }
      wait = nextPollWait(wait, polling);
    }
    this.clearAttention();
    const settled = reported()!;
    this.settled.clear();
    return settled.phase === 'succeeded'
      ? { ok: true, sessionId: record.sessionId }
      : {
          ok: false,
          sessionId: record.sessionId,
          reason:
            settled.reason ?? reason(settled.phase === 'canceled' ? 'charge_canceled' : 'charge_failed'),
        };
  }

  /** Waits up to `ms` for `wake`; continues as new first when the history is long. True if woken. */
  private async restOrContinue(wake: () => boolean, ms: number): Promise<boolean> {
    if (historyLong(HISTORY_LIMITS.subscription)) await this.continueAsNew();
    return waitUntil(wake, ms);
  }

  /** Records the attempt's result and decides what comes next (docs/billing.md, "Dunning"). */
  private settle(outcome: Outcome): void {
    const s = this.state;
    const c = s.charging!;
    delete s.charging;
    const now = Date.now();
    s.lastChargeEndedAt = now;
    const record = this.current();
    const period = this.periodOf(c.period);
    if (record) {
      record.outcome = outcome.ok ? 'succeeded' : 'failed';
      record.finishedAt = iso(now);
      if (outcome.reason) record.reason = outcome.reason;
    }
    if (outcome.ok) return this.paid(c.kind, period, outcome.sessionId);
    s.totals.failed++;
    const why = outcome.reason ?? reason('charge_failed');
    const cls = classify(why, this.input.dunning);
    if (record) record.declineClass = cls;
    period.lastReason = why;
    period.declineClass = cls;
    if (cls === 'unavailable') return this.unavailable(c.kind, period, why);
    delete s.unavailableWaitMs;
    if (c.kind === 'collect') {
      // One attempt per collection: the period stays owed (collected again with the next success).
      s.collecting = s.collecting.filter((p) => p !== period.period);
      this.announce('subscription.charge_failed', { billingPeriod: period });
      if (cls === 'hard') this.requirePaymentMethod();
      this.keepPeriods();
      this.boundary = true;
      return;
    }
    const failures = (s.dunning?.period === period.period ? s.dunning.failures : 0) + 1;
    const delays = this.input.dunning.retryDelaysMs;
    const retry =
      cls === 'soft' && failures <= delays.length && s.status !== 'canceled' && s.status !== 'ended';
    s.dunning = {
      period: period.period,
      failures,
      ...(retry ? { nextRetryAt: iso(now + delays[failures - 1]!) } : {}),
      lastReason: why,
      declineClass: cls,
      exhausted: !retry,
    };
    if (retry) {
      s.retryAt = now + delays[failures - 1]!;
      this.announce('subscription.charge_failed', { billingPeriod: period });
      return;
    }
    this.announce('subscription.charge_failed', { billingPeriod: period });
    this.owe(period);
    this.periodSettled();
    if (cls === 'hard') this.requirePaymentMethod();
    else if (!this.over()) this.exhausted(period.period, failures, why);
  }

  /** A charge paid its period. A paid due period also collects what is owed (collect_with_next). */
  private paid(kind: ChargeRecord['kind'], period: PeriodState, sessionId: string): void {
    const s = this.state;
    const wasOwed = period.status === 'owed';
    period.status = 'paid';
    period.paidAt = iso(Date.now());
    period.paidBy = sessionId;
    s.totals.succeeded++;
    s.totals.chargedAmount += period.amount;
    this.clearAttention();
    if (kind === 'collect') {
      s.collecting = s.collecting.filter((p) => p !== period.period);
      delete s.collectAfter;
      delete s.unavailableWaitMs;
      if (wasOwed) {
        s.totals.owedPeriods--;
        s.totals.owedAmount -= period.amount;
        s.totals.collectedPeriods++;
      }
      this.announce('subscription.period_collected', { billingPeriod: period });
      this.keepPeriods();
      this.boundary = true;
      return;
    }
    this.announce('subscription.charged', { billingPeriod: period });
    if (this.input.policy.owed === 'collect_with_next')
      for (const owed of this.owed()) if (!s.collecting.includes(owed.period)) s.collecting.push(owed.period);
    this.periodSettled();
  }

  /** The provider could not decide: never a decline; the same period is tried again after a wait. */
  private unavailable(kind: ChargeRecord['kind'], period: PeriodState, why: EndReason): void {
    const s = this.state;
    const now = Date.now();
    const wait = s.unavailableWaitMs ?? this.input.dunning.unavailableRetryMs;
    s.unavailableWaitMs = Math.min(wait * 2, BILLING_POLICY_LIMITS.maxUnavailableWaitMs);
    if (kind === 'collect') s.collectAfter = now + wait;
    else {
      s.retryAt = now + wait;
      s.dunning = {
        period: period.period,
        failures: s.dunning?.period === period.period ? s.dunning.failures : 0,
        nextRetryAt: iso(s.retryAt),
        lastReason: why,
        declineClass: 'unavailable',
        exhausted: false,
      };
    }
    this.needsAttention(
      reason('provider_call_failing', `the provider could not decide: ${reasonText(why)}`, {
        subject: this.referenceOf(period.period, period.attempts - 1),
      }),
    );
    this.recorder.record();
  }

  /** A hard decline: no charge until the partner gives a new token and resumes. */
  private requirePaymentMethod(): void {
    const s = this.state;
    s.paymentMethodRequired = true;
    s.collecting = [];
    if (s.status === 'active') {
      this.setStatus('past_due');
      this.announce('subscription.past_due');
    }
    this.announce('subscription.payment_method_required');
  }

  /** A period's soft-decline retries are spent (the period is owed): what the policy says next. */
  private exhausted(period: number, failures: number, why: EndReason): void {
    switch (this.input.dunning.onExhausted) {
      case 'continue':
        return;
      case 'pause':
        if (this.state.status === 'active') {
          this.setStatus('past_due');
          this.announce('subscription.past_due');
        }
        return;
      case 'cancel': {
        const unpaid = `period ${period} unpaid after ${failures} attempts`;
        this.cancelNow(reason('past_due', `${unpaid} (${reasonText(why)})`), false);
        return;
      }
    }
  }

  private needsAttention(why: AttentionReason): void {
    const raised = attention.raise(this.state, why, Date.now());
    if (!raised) return;
    if (raised === 'first') wf.upsertSearchAttributes([{ key: NeedsAttention, value: true }]);
    this.recorder.record();
    wf.log.warn('subscription needs attention', { subscriptionId: this.input.subscriptionId, reason: why });
  }

  private clearAttention(): void {
    if (!attention.clear(this.state)) return;
    wf.upsertSearchAttributes([{ key: NeedsAttention, value: false }]);
    this.recorder.record();
  }

  // ---- the partner's requests ----

  private handleMessages(): void {
    const now = () => Date.now();
    wf.setHandler(subscriptionQuery, () => this.view());
    wf.setHandler(
      cancelSubscriptionUpdate,
      (arg) => {
        const why = reason('canceled_by_partner', arg?.reason);
        return this.stored(arg?.atPeriodEnd ? this.cancelAtPeriodEnd(why) : this.cancelNow(why, false));
      },
      {
        validator: (arg) => {
          checkArgument(subscriptionCancelRequest, arg ?? {});
          this.refuseWhen(['canceled', 'ended'], 'cancel');
        },
      },
    );
    wf.setHandler(pauseSubscriptionUpdate, (arg) => this.stored(this.pause(arg?.resumeAt)), {
      validator: (arg) => {
        const { resumeAt } = checkArgument(pauseRequest, arg ?? {});
        this.refuseWhen(['paused', 'past_due', 'canceled', 'ended'], 'pause');
        if (
          resumeAt !== undefined &&
          (resumeAt <= now() || resumeAt > now() + SUBSCRIPTION_LIMITS.maxAheadMs)
        )
          throw invalidArgument('resumeAt', 'a time ahead, at most two years');
      },
    });
    wf.setHandler(resumeSubscriptionUpdate, (arg) => this.stored(this.resume(arg?.restart === true)), {
      validator: (arg) => {
        checkArgument(resumeRequest, arg ?? {});
        const undoCancel = this.state.status === 'active' && this.state.cancelation?.atPeriodEnd;
        if (!undoCancel) this.refuseWhen(['active', 'canceled', 'ended'], 'resume');
      },
    });
    wf.setHandler(changeSubscriptionUpdate, (change) => this.stored(this.change(change)), {
      validator: (change) => {
        checkArgument(subscriptionChange, change);
        // Over, only the means of paying what is still owed may change (a new token, the payer's details).
        const paymentOnly =
          change.amount === undefined && change.schedule === undefined && change.fromPeriod === undefined;
        if (!(paymentOnly && this.owed().length)) this.refuseWhen(['canceled', 'ended'], 'change');
        checkChange(change, this.state, this.input, now());
      },
    });
    wf.setHandler(collectOwedUpdate, (arg) => this.stored(this.collect(arg?.periods)), {
      validator: (arg) => {
        const { periods } = checkArgument(collectRequest, arg ?? {});
        this.owedNamed(periods);
      },
    });
    wf.setHandler(writeOffOwedUpdate, (arg) => this.stored(this.writeOff(arg?.periods, arg?.reason)), {
      validator: (arg) => {
        const { periods } = checkArgument(writeOffRequest, arg ?? {});
        for (const p of this.owedNamed(periods))
          if (this.state.charging?.period === p.period)
            throw stateConflict(`period ${p.period} is being charged: wait for its result`, {
              code: 'period_being_charged',
              phase: this.state.status,
            });
      },
    });
    wf.setHandler(sessionSettledSignal, (arg) => {
      const s = parseMessage(sessionSettled, arg);
      if (!s.ok) return this.refusedMessage('sessionSettled', s.why);
      this.settled.set(s.value.sessionId, s.value as SessionSettled);
    });
  }

  /** A signal whose payload does not parse changes nothing (the signal is not proof of anything): logged. */
  private refusedMessage(message: string, why: string): void {
    wf.log.warn('signal refused: its payload does not parse', { message, why });
  }

  private refuseWhen(statuses: SubscriptionStatus[], what: keyof typeof NOT_ABLE): void {
    if (statuses.includes(this.state.status))
      throw stateConflict(`${what} is not possible while the subscription is ${this.state.status}`, {
        code: NOT_ABLE[what],
        phase: this.state.status,
      });
  }

  /** The owed periods a request names (default: every one), or a conflict saying why none can be. */
  private owedNamed(periods: number[] | undefined): PeriodState[] {
    const owed = this.owed();
    if (!owed.length)
      throw stateConflict('no period is owed', { code: 'nothing_owed', phase: this.state.status });
    if (!periods) return owed;
    return periods.map((n) => {
      const p = owed.find((o) => o.period === n);
      if (!p)
        throw stateConflict(`period ${n} is not owed`, { code: 'period_not_owed', phase: this.state.status });
      return p;
    });
  }

  private setStatus(status: SubscriptionStatus): void {
    if (this.state.status === status) return;
    this.state.status = status;
    wf.upsertSearchAttributes([{ key: PaymentStatus, value: status }]);
  }

  /**
   * Canceled now: nothing falls due any more. A charge in flight finishes and is recorded; a period in
   * dunning is owed (its retries end with the subscription).
   */
  private cancelNow(why: EndReason, atPeriodEnd: boolean): SubscriptionView {
    const s = this.state;
    const now = Date.now();
    s.cancelation = {
      atPeriodEnd,
      requestedAt: s.cancelation?.requestedAt ?? now,
      // At the period end: when the period paid for ended (the next one's due date), however late seen.
      effectiveAt: atPeriodEnd ? Math.min(now, s.periodDueAt) : now,
      reason: why,
    };
    s.canceledReason = why;
    this.setStatus('canceled');
    this.version++;
    this.announce('subscription.canceled');
    if (s.open !== undefined && !s.charging) this.oweOpenPeriod();
    return this.view();
  }

  /** The open period's retries end with the subscription: it is owed (or written off, per policy). */
  private oweOpenPeriod(): void {
    this.owe(this.periodOf(this.state.open!));
    this.periodSettled();
  }

  /** No charge after the period paid for: canceled when the next one falls due. */
  private cancelAtPeriodEnd(why: EndReason): SubscriptionView {
    const s = this.state;
    s.cancelation = {
      atPeriodEnd: true,
      requestedAt: Date.now(),
      effectiveAt: s.periodDueAt,
      reason: why,
    };
    this.version++;
    this.announce('subscription.cancel_scheduled');
    return this.view();
  }

  private pause(resumeAt: number | undefined): SubscriptionView {
    if (resumeAt !== undefined) this.state.pausedUntil = resumeAt;
    this.setStatus('paused');
    this.version++;
    this.announce('subscription.paused');
    return this.view();
  }

  /**
   * From paused or past_due: no period fell due meanwhile; the next is the schedule's first due date from
   * now (the billing day stays), or now with `restart` (the schedule anchored there). From active with a
   * cancel at the period end: the cancel is withdrawn.
   */
  private resume(restart: boolean): SubscriptionView {
    const s = this.state;
    if (s.status === 'active') delete s.cancelation;
    else {
      resumeAt(s, Date.now(), restart);
      delete s.pausedUntil;
      delete s.paymentMethodRequired;
      this.setStatus('active');
    }
    this.version++;
    this.announce('subscription.resumed');
    return this.view();
  }

  /** From `fromPeriod` (default the next to fall due), prorated per the request or the policy. */
  private change(change: SubscriptionChange): SubscriptionView {
    const before = this.state.amount.amount;
    const proration = change.proration ?? this.input.policy.proration;
    const result: ChangeResult = acceptChange(this.state, change, this.input, Date.now(), proration);
    if (this.state.amount.amount !== before)
      wf.upsertSearchAttributes([{ key: AmountMinor, value: this.state.amount.amount }]);
    this.version++;
    this.announce('subscription.changed', {
      change: {
        fromPeriod: result.fromPeriod,
        ...(change.amount !== undefined ? { amount: change.amount } : {}),
        ...(change.schedule !== undefined ? { schedule: true } : {}),
        ...(change.token !== undefined ? { token: true } : {}),
        ...(change.customer !== undefined ? { customer: true } : {}),
        proration,
        adjustment: result.adjustment,
      },
    });
    return this.view();
  }

  /** Queues owed periods for collection, oldest first, one charge at a time. */
  private collect(periods: number[] | undefined): SubscriptionView {
    const s = this.state;
    for (const p of this.owedSafe(periods)) if (!s.collecting.includes(p.period)) s.collecting.push(p.period);
    this.version++;
    this.recorder.record();
    return this.view();
  }

  private writeOff(periods: number[] | undefined, words: string | undefined): SubscriptionView {
    const s = this.state;
    const now = iso(Date.now());
    for (const p of this.owedSafe(periods)) {
      if (s.charging?.period === p.period) continue;
      p.status = 'written_off';
      p.writtenOffAt = now;
      p.writeOffReason = words ?? 'written off by the partner';
      s.collecting = s.collecting.filter((n) => n !== p.period);
      s.totals.owedPeriods--;
      s.totals.owedAmount -= p.amount;
      s.totals.writtenOffPeriods++;
      s.totals.writtenOffAmount += p.amount;
      this.announce('subscription.period_written_off', { billingPeriod: p });
    }
    this.keepPeriods();
    this.version++;
    return this.view();
  }

  /** owedNamed after the validator passed: what is still owed of it (a handler never throws). */
  private owedSafe(periods: number[] | undefined): PeriodState[] {
    const owed = this.owed();
    return periods ? owed.filter((p) => periods.includes(p.period)) : owed;
  }

  /**
   * An event for the partner's backend, numbered per subscription across runs: the subscription as it is
   * now, and what the event is about (a period, a change).
   */
  private announce(type: SubscriptionEventType, about: EventAbout = {}): void {
    const subject = { subscription_id: this.input.subscriptionId };
    const data = () => ({
      ...this.view(),
      ...(about.billingPeriod ? { billingPeriod: { ...about.billingPeriod } } : {}),
      ...(about.change ? { change: about.change } : {}),
    });
    this.recorder.record(nextEvent(this.state, subject, type, iso(Date.now()), data));
  }

  /**
   * An Update's answer once the store holds it too, so a read right after it shows the same; a store
   * that is slow or down delays the answer by STORED_WITHIN_MS at most (the record follows).
   */
  private async stored(view: SubscriptionView): Promise<SubscriptionView> {
    await this.recorder.flushed(STORED_WITHIN_MS);
    return view;
  }

  /** Lets Updates finish, records the subscription as it ends, and answers it. */
  private async close(): Promise<SubscriptionView> {
    await this.settledDown();
    return this.view();
  }

  // ---- reading ----

  view(): SubscriptionView {
    const s = this.state;
    const active = s.status === 'active';
    const ending = s.cancelation?.atPeriodEnd && !this.over();
    const work = active ? this.nextWork() : undefined;
    const next = work && !(ending && work.kind === 'due') ? work : undefined;
    return {
      subscriptionId: this.input.subscriptionId,
      reference: this.input.reference,
      status: s.status,
      ...(s.attention ? { attention: { ...s.attention } } : {}),
      amount: { ...s.amount },
      token: s.token,
      schedule: { ...s.schedule },
      ...(next ? { nextChargeAt: iso(next.at) } : {}),
      nextDueDates: active && !ending ? upcomingDueDates(this.input, s).map(iso) : [],
      ...(s.pendingChanges
        ? {
            pendingChanges: s.pendingChanges.map((c) => ({
              fromPeriod: c.fromPeriod,
              ...(c.amount !== undefined ? { amount: c.amount } : {}),
              ...(c.schedule ? { schedule: { ...c.schedule } } : {}),
            })),
          }
        : {}),
      ...(s.credit ? { credit: s.credit } : {}),
      ...(this.input.trialEnd !== undefined ? { trialEnd: iso(this.input.trialEnd) } : {}),
      ...(this.input.endAfterPeriods !== undefined ? { endAfterPeriods: this.input.endAfterPeriods } : {}),
      ...(this.input.endAt !== undefined ? { endAt: iso(this.input.endAt) } : {}),
      period: s.period,
      periods: s.periods.map((p) => ({ ...p })),
      ...(s.collecting.length ? { collecting: [...s.collecting] } : {}),
      charges: s.charges.map((c) => ({ ...c })),
      totals: { ...s.totals },
      ...(s.dunning ? { dunning: { ...s.dunning } } : {}),
      ...(s.paymentMethodRequired ? { paymentMethodRequired: true } : {}),
      ...(s.pausedUntil !== undefined ? { pausedUntil: iso(s.pausedUntil) } : {}),
      ...(s.cancelation
        ? {
            cancelation: {
              atPeriodEnd: s.cancelation.atPeriodEnd,
              requestedAt: iso(s.cancelation.requestedAt),
              ...(s.cancelation.effectiveAt !== undefined
                ? { effectiveAt: iso(s.cancelation.effectiveAt) }
                : {}),
              ...(s.cancelation.reason ? { reason: s.cancelation.reason } : {}),
            },
          }
        : {}),
      ...(s.canceledReason ? { canceledReason: s.canceledReason } : {}),
      dunningPolicy: this.input.dunning,
      policy: this.input.policy,
      runs: s.runs,
      createdAt: s.createdAt,
    };
  }
}

/** What an event is about besides the subscription: a period, or a change (its data beside the view). */
interface EventAbout {
  billingPeriod?: BillingPeriodView;
  change?: {
    fromPeriod: number;
    amount?: number;
    schedule?: boolean;
    token?: boolean;
    customer?: boolean;
    proration: string;
    adjustment: number;
  };
}

export type { DeclineClass };
