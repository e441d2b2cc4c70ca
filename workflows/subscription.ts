/**
 * Recurring billing (DESIGN decision 8): one long-lived workflow per subscription, id `sub-<reference>`.
 *
 *   wait (durable timer) until the next charge is due
 *   -> charge the period: a session for (period, attempt), opened through paysaga's own reference
 *      `<reference>:p<period>[:r<attempt>]` (workflows/reference.ts), so that no retry, crash or reset ever
 *      opens a second session for the same attempt
 *   -> follow it to the provider's result (the session says so; the provider's state decides when it is late)
 *   -> paid: schedule the next period; failed: dunning retries after the configured delays; every retry
 *      failed: past_due, then cancel or stay past_due
 *
 * An attempt fails only once the provider says so: an outage delays the period (the subscription shows
 * `attention`), it never ends the subscription. cancel / pause / resume / change arrive as validated
 * Updates; the `subscription` query shows it all; continue-as-new bounds the history, also while a charge
 * is in flight (the charge is carried and followed on).
 *
 * Signals: sessionOpened, sessionSettled (from the charge's reference and session). Queries: subscription.
 * Updates: cancelSubscription, pauseSubscription, resumeSubscription, changeSubscription.
 */
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import * as wf from '@temporalio/workflow';
import { nextEvent, type SubscriptionEventType } from '../common/events';
import { failureOf, invalidArgument, stateConflict, type StateConflictCode } from '../common/failures';
import type { SubscriptionStatus } from '../common/kinds';
import { nextPollWait } from '../common/settings';
import {
  cancelSubscriptionUpdate,
  changeSubscriptionUpdate,
  pauseSubscriptionUpdate,
  resumeSubscriptionUpdate,
  sessionOpenedSignal,
  sessionSettledSignal,
  subscriptionQuery,
  type SessionSettled,
  type SubscriptionChange,
} from '../common/messages';
import {
  cancelRequest,
  checkArgument,
  resumeRequest,
  parseMessage,
  sessionOpened,
  sessionSettled,
  subscriptionChange,
} from '../common/message-schemas';
import { reason, reasonText, type AttentionReason, type EndReason } from '../common/reasons';
import { AmountMinor, CreatedAt, NeedsAttention, PaymentStatus } from '../common/search-attributes';
import { referenceWorkflowId, type ReferenceInput } from '../common/session-input';
import { type SubscriptionInput, type SubscriptionState } from '../common/subscription-input';
import type { ChargeRecord, SubscriptionView } from '../common/views';
import {
  acceptChange,
  advance,
  checkChange,
  firstDue,
  firstOpenPeriod,
  pastTheEnd,
  resolveSchedule,
  resumeAt,
  upcomingDueDates,
} from './billing';
import { untilAnswered, provider } from './calls';
import { SubscriptionRecorder } from './subscription-recorder';
import { referenceWorkflow } from './reference';
import * as attention from './attention';
import { phaseOf } from '../common/snapshot';
import { iso } from './iso';
import { HISTORY_LIMITS, historyLong } from './history';

export const DEFAULT_PERIODS_PER_RUN = 100;
/** The charge history the workflow keeps (and carries across continue-as-new); totals count them all. */
export const MAX_CHARGES_KEPT = 50;
/** How long paysaga keeps a charge's reference (and so never opens a second session for it). */
/** The code a refused change of a subscription answers with, for each change. */
const NOT_ABLE = {
  cancel: 'not_cancelable',
  pause: 'not_pauseable',
  resume: 'not_resumeable',
  change: 'not_changeable',
} as const satisfies Record<string, StateConflictCode>;

const DEFAULT_KEEP_REFERENCE_MS = 400 * 24 * 3_600_000;
/** How long an Update's answer waits for its change to be stored. */
const STORED_WITHIN_MS = 10_000;

interface Outcome {
  ok: boolean;
  reason?: EndReason;
}

export async function subscriptionWorkflow(
  input: SubscriptionInput,
  carried?: SubscriptionState,
): Promise<SubscriptionView> {
  const sub = new Subscription(input, carried ?? firstState(input));
  sub.endWhenDone(); // a first period already past the end (endAt before it)
  const periodsPerRun = input.periodsPerRun ?? DEFAULT_PERIODS_PER_RUN;
  let periodsThisRun = 0;

  while (!sub.over() || sub.chargeInFlight()) {
    if (periodsThisRun >= periodsPerRun || sub.historyLong()) await sub.continueAsNew();
    if (sub.chargeInFlight()) {
      if (sub.settle(await sub.followCharge())) periodsThisRun++;
      continue;
    }
    if (sub.state.status !== 'active') {
      await sub.untilResumedOrCanceled();
      continue;
    }
    if (await sub.untilDue()) sub.openCharge();
  }
  return sub.close();
}

/** Epoch ms past which a Date cannot hold a time. */
const LAST_TIME_MS = 8.64e15;

function firstState(input: SubscriptionInput): SubscriptionState {
  // The API refuses these; a workflow started some other way fails here, once, instead of on every task.
  if (
    input.firstChargeAt !== undefined &&
    !(Number.isSafeInteger(input.firstChargeAt) && Math.abs(input.firstChargeAt) <= LAST_TIME_MS)
  )
    throw invalidArgument('firstChargeAt', 'epoch milliseconds that a date can hold');
  const now = Date.now();
  const schedule = input.schedule && resolveSchedule(input.schedule, iso(now));
  const first = firstDue(input, schedule, now);
  return {
    status: 'active',
    amount: { ...input.amount },
    token: input.token,
    ...(schedule ? { schedule } : { intervalMs: input.intervalMs }),
    period: 1,
    attempt: 0,
    periodDueAt: first,
    nextChargeAt: first,
    charges: [],
    totals: { attempts: 0, succeeded: 0, failed: 0, chargedAmount: 0 },
    eventSequence: 0,
    runs: 0,
    // The CreatedAt search attribute it was started with, so that a search by time finds what the view says.
    createdAt: iso(wf.workflowInfo().typedSearchAttributes.get(CreatedAt)?.getTime() ?? now),
  };
}

class Subscription {
  /** Bumped by every accepted Update: a waiting loop wakes up and looks again. */
  private version = 0;
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
    if (state.eventSequence === 0) this.announce('subscription.created');
    // A new run (continue-as-new) shows its count.
    else if (state.runs > 0) this.recorder.record();
    wf.setHandler(subscriptionQuery, () => this.view());
    wf.setHandler(
      cancelSubscriptionUpdate,
      (arg) => this.stored(this.cancel(reason('canceled_by_partner', arg?.reason))),
      {
        validator: (arg) => {
          checkArgument(cancelRequest, arg);
          this.refuseWhen(['canceled', 'ended'], 'cancel');
        },
      },
    );
    wf.setHandler(pauseSubscriptionUpdate, () => this.stored(this.pause()), {
      validator: () => this.refuseWhen(['paused', 'past_due', 'canceled', 'ended'], 'pause'),
    });
    wf.setHandler(resumeSubscriptionUpdate, (arg) => this.stored(this.resume(arg?.restart === true)), {
      validator: (arg) => {
        if (arg !== undefined) checkArgument(resumeRequest, arg);
        this.refuseWhen(['active', 'canceled', 'ended'], 'resume');
      },
    });
    wf.setHandler(changeSubscriptionUpdate, (change) => this.stored(this.change(change)), {
      validator: (change) => {
        checkArgument(subscriptionChange, change);
        this.refuseWhen(['canceled', 'ended'], 'change');
        checkChange(change, this.state, this.firstOpen());
      },
    });
    wf.setHandler(sessionOpenedSignal, (arg) => {
      const opened = parseMessage(sessionOpened, arg);
      if (!opened.ok) return this.refusedMessage('sessionOpened', opened.why);
      const { reference, sessionId } = opened.value;
      const record = this.current();
      if (record && !record.sessionId && reference === this.chargeReference()) {
        record.sessionId = sessionId;
        this.recorder.record();
      }
    });
    wf.setHandler(sessionSettledSignal, (arg) => {
      const s = parseMessage(sessionSettled, arg);
      if (!s.ok) return this.refusedMessage('sessionSettled', s.why);
      this.settled.set(s.value.sessionId, s.value as SessionSettled);
    });
  }

  /** Canceled or ended: nothing more is charged (a charge in flight is still followed to its result). */
  over(): boolean {
    return this.state.status === 'canceled' || this.state.status === 'ended';
  }

  /** The last charge record, when it has no outcome yet. */
  private current(): ChargeRecord | undefined {
    const last = this.state.charges.at(-1);
    return last?.outcome === 'pending' ? last : undefined;
  }

  chargeInFlight(): boolean {
    return this.current() !== undefined;
  }

  /** Continue-as-new is due (workflows/history.ts), even mid-charge. */
  historyLong(): boolean {
    return historyLong(HISTORY_LIMITS.subscription);
  }

  async continueAsNew(): Promise<never> {
    await wf.condition(wf.allHandlersFinished);
    await this.flushed();
    return wf.continueAsNew<typeof subscriptionWorkflow>(this.input, {
      ...this.state,
      runs: this.state.runs + 1,
    });
  }

  // ---- waiting ----

  /** Sleeps on a durable timer until the next charge is due; false when an Update came first. */
  async untilDue(): Promise<boolean> {
    const seen = this.version;
    const wait = this.state.nextChargeAt - Date.now();
    const woken = wait > 0 ? await wf.condition(() => this.version !== seen, wait) : false;
    return !woken && this.state.status === 'active';
  }

  async untilResumedOrCanceled(): Promise<void> {
    await wf.condition(() => this.state.status === 'active' || this.state.status === 'canceled');
  }

  // ---- charging ----

  /** `<reference>:p<period>[:r<attempt>]`: paysaga's reference of the attempt in flight (or next). */
  private chargeReference(): string {
    const s = this.state;
    return `${this.input.reference}:p${s.period}${s.attempt ? `:r${s.attempt}` : ''}`;
  }

  /** Records the attempt; followCharge opens its session and follows it. */
  openCharge(): void {
    const s = this.state;
    const money = (s.periodAmount ??= { ...s.amount });
    // The token of the subscription now: a token changed during dunning is used by the next retry.
    s.chargeToken = s.token;
    s.charges.push({
      period: s.period,
      attempt: s.attempt,
      sessionId: '',
      amount: money.amount,
      currency: money.currency,
      dueAt: iso(s.periodDueAt),
      startedAt: iso(Date.now()),
      outcome: 'pending',
    });
    if (s.charges.length > MAX_CHARGES_KEPT) s.charges.splice(0, s.charges.length - MAX_CHARGES_KEPT);
    s.totals.attempts++;
    this.recorder.record();
  }

  /**
   * The attempt's session, opened through its reference: the reference's workflow (id derived from it)
   * opens at most one session whatever happens here (a retry, a crash, a reset), and signals which one.
   * Started again after it failed (the provider refused to open the session): that refusal is the
   * attempt's failure.
   */
  private async openSession(record: ChargeRecord): Promise<Outcome | undefined> {
    const s = this.state;
    const reference = this.chargeReference();
    const money = { amount: record.amount, currency: record.currency };
    const sumInfo = { sum: money.amount, currency_code: money.currency };
    const paymentInfo = {
      type: 'recurring_token_info' as const,
      recurring_token_info: { token: s.chargeToken ?? s.token },
    };
    // A merchant-initiated charge is one init/checkout (the spec's sequence).
    const intake: ReferenceInput = {
      reference,
      fingerprint: `${this.input.subscriptionId}:${s.period}:${s.attempt}`,
      requestId: this.input.subscriptionId,
      open: {
        by: 'init_checkout',
        body: { payment_info: paymentInfo, sum_info: sumInfo, user_info: this.input.customer },
      },
      session: {
        kind: 'recurring_payment',
        reference,
        request: {
          money,
          ...(this.input.submerchantId ? { submerchantId: this.input.submerchantId } : {}),
          ...(this.input.projectId ? { projectId: this.input.projectId } : {}),
        },
        start: { by: 'provider' },
        settings: this.input.settings,
        notify: this.input.subscriptionId,
      },
      keepMs: this.input.keepReferencesMs ?? DEFAULT_KEEP_REFERENCE_MS,
      notify: this.input.subscriptionId,
    };
    let refused: string | undefined;
    try {
      const child = await wf.startChild(referenceWorkflow, {
        workflowId: referenceWorkflowId(reference),
        args: [intake],
        parentClosePolicy: wf.ParentClosePolicy.ABANDON,
        workflowIdReusePolicy: wf.WorkflowIdReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
      });
      child.result().catch((err: Error) => (refused = failureOf(err)?.message ?? err.message));
    } catch (err) {
      // Started before (a retry, a reset, a continued run): it signals the session it opened.
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
    const { startMs } = this.input.settings.deadlines;
    while (!record.sessionId) {
      if (await this.restOrContinue(() => !!record.sessionId || refused !== undefined, startMs)) {
        if (refused !== undefined) return { ok: false, reason: reason('charge_refused', refused) };
        break;
      }
      this.needsAttention(
        reason('charge_not_open', 'the provider session is not open yet', { subject: reference }),
      );
    }
    return undefined;
  }

  /**
   * Follows the charge in flight to the provider's result: the session signals it; when it is late the
   * provider's state decides. An unreachable provider is shown (attention) and waited out, never counted
   * as a failed attempt.
   */
  async followCharge(): Promise<Outcome> {
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
          if (this.historyLong()) await this.continueAsNew();
        },
      });
      const phase = phaseOf(state);
      if (phase === 'succeeded' || phase === 'failed' || phase === 'canceled') {
        if (!reported()) this.settled.set(record.sessionId, { sessionId: record.sessionId, phase });
        break;
      }
      wait = nextPollWait(wait, polling);
    }
    this.clearAttention();
    const settled = reported()!;
    this.settled.clear();
    return settled.phase === 'succeeded'
      ? { ok: true }
      : {
          ok: false,
          reason:
            settled.reason ?? reason(settled.phase === 'canceled' ? 'charge_canceled' : 'charge_failed'),
        };
  }

  /** Waits up to `ms` for `wake`; continues as new first when the history is long. True if woken. */
  private async restOrContinue(wake: () => boolean, ms: number): Promise<boolean> {
    if (this.historyLong()) await this.continueAsNew();
    return wf.condition(wake, ms);
  }

  /**
   * Records the attempt and decides what comes next. True when the period is over (paid, or given up
   * after the last dunning retry).
   */
  settle(outcome: Outcome): boolean {
    const s = this.state;
    const now = Date.now();
    const record = this.current();
    if (record) {
      record.outcome = outcome.ok ? 'succeeded' : 'failed';
      record.finishedAt = iso(now);
      if (outcome.reason) record.reason = outcome.reason;
    }
    if (outcome.ok) {
      s.totals.succeeded++;
      s.totals.chargedAmount += record?.amount ?? 0;
      delete s.dunning;
      this.nextPeriod(now);
      this.announce('subscription.charged');
      this.endWhenDone();
      return true;
    }
    s.totals.failed++;
    // Announced (and so recorded) once the dunning state says what comes next: the record written with
    // the event is the subscription as it is after the failure (seed 077fa8e5 found a final row
    // without the dunning a retry had set, because nothing was recorded after it).
    const delays = this.input.dunning.retryDelaysMs;
    const failures = s.attempt + 1;
    const lastReason = outcome.reason ?? reason('charge_failed');
    if (s.attempt < delays.length) {
      s.nextChargeAt = now + (delays[s.attempt] ?? 0);
      s.attempt++;
      s.dunning = {
        period: s.period,
        failures,
        nextRetryAt: iso(s.nextChargeAt),
        lastReason,
        exhausted: false,
      };
      this.announce('subscription.charge_failed');
      return false;
    }
    const exhausted = { period: s.period, failures, lastReason, exhausted: true };
    s.dunning = exhausted;
    this.announce('subscription.charge_failed');
    this.nextPeriod(now);
    if (this.endWhenDone()) return true;
    if (s.status !== 'canceled') {
      this.setStatus('past_due');
      this.announce('subscription.past_due');
      if (this.input.dunning.onExhausted === 'cancel') {
        const unpaid = `period ${exhausted.period} unpaid after ${failures} attempts`;
        this.cancel(reason('past_due', `${unpaid} (${reasonText(lastReason)})`));
      }
    }
    return true;
  }

  /** The next period and its due date, from the schedule (workflows/billing.ts), never from now. */
  private nextPeriod(now: number): void {
    const changed = advance(this.state, now);
    if (changed.amount !== undefined)
      wf.upsertSearchAttributes([{ key: AmountMinor, value: changed.amount }]);
  }

  /** Past its last period (endAfterPeriods, endAt), an active or past-due subscription ends. */
  endWhenDone(): boolean {
    const s = this.state;
    if (this.over() || !pastTheEnd(this.input, s.period, s.periodDueAt)) return false;
    this.setStatus('ended');
    this.version++;
    this.announce('subscription.ended');
    return true;
  }

  private needsAttention(why: AttentionReason): void {
    const raised = attention.raise(this.state, why, Date.now());
    if (!raised) return;
    if (raised === 'first') wf.upsertSearchAttributes([{ key: NeedsAttention, value: true }]);
    this.recorder.record();
    wf.log.warn('subscription needs attention', {
      subscriptionId: this.input.subscriptionId,
      reason: why,
    });
  }

  private clearAttention(): void {
    if (!attention.clear(this.state)) return;
    wf.upsertSearchAttributes([{ key: NeedsAttention, value: false }]);
    this.recorder.record();
  }

  // ---- Updates ----

  /** A signal whose payload does not parse changes nothing (DESIGN decision 16): said in the log. */
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

  private setStatus(status: SubscriptionStatus): void {
    if (this.state.status === status) return;
    this.state.status = status;
    wf.upsertSearchAttributes([{ key: PaymentStatus, value: status }]);
  }

  /** A charge already started finishes and is recorded; none follows. */
  private cancel(why: EndReason): SubscriptionView {
    this.state.canceledReason = why;
    this.setStatus('canceled');
    this.version++;
    this.announce('subscription.canceled');
    return this.view();
  }

  private pause(): SubscriptionView {
    this.setStatus('paused');
    this.version++;
    this.announce('subscription.paused');
    return this.view();
  }

  /**
   * Periods that fell due while paused are not charged: the next is the schedule's first due date from
   * now (the billing day stays), or now with `restart` (and the schedule anchored there).
   */
  private resume(restart: boolean): SubscriptionView {
    resumeAt(this.state, Date.now(), restart);
    this.setStatus('active');
    this.version++;
    this.announce('subscription.resumed');
    return this.view();
  }

  /** The first period a change may apply to: the current one unless its charge has started. */
  private firstOpen(): number {
    return firstOpenPeriod(this.state, this.chargeInFlight());
  }

  /** From `fromPeriod` (default the first open one): the amount of a period being charged stays. */
  private change(change: SubscriptionChange): SubscriptionView {
    const before = this.state.amount.amount;
    acceptChange(this.state, change, this.firstOpen(), Date.now());
    if (this.state.amount.amount !== before)
      wf.upsertSearchAttributes([{ key: AmountMinor, value: this.state.amount.amount }]);
    this.version++;
    this.recorder.record();
    return this.view();
  }

  /** An event for the partner's backend, numbered per subscription across runs (DESIGN decision 13). */
  private announce(type: SubscriptionEventType): void {
    const subject = { subscription_id: this.input.subscriptionId };
    const event = nextEvent(this.state, subject, type, iso(Date.now()), () => this.view());
    this.recorder.record(event);
  }

  /** Every change and event so far written. */
  private async flushed(): Promise<void> {
    await this.recorder.flushed();
  }

  /**
   * An Update's answer once the store holds it too, so a read right after it shows the same; a store
   * that is slow or down delays the answer by STORED_WITHIN_MS at most (the record follows).
   */
  private async stored(view: SubscriptionView): Promise<SubscriptionView> {
    await this.recorder.flushed(STORED_WITHIN_MS);
    return view;
  }

  /** Lets Updates finish and events leave, then answers the subscription as it ends. */
  async close(): Promise<SubscriptionView> {
    await wf.condition(wf.allHandlersFinished);
    await this.flushed();
    return this.view();
  }

  // ---- reading ----

  view(): SubscriptionView {
    const s = this.state;
    return {
      subscriptionId: this.input.subscriptionId,
      reference: this.input.reference,
      status: s.status,
      ...(s.attention ? { attention: { ...s.attention } } : {}),
      amount: { ...s.amount },
      token: s.token,
      ...(s.schedule ? { schedule: { ...s.schedule } } : {}),
      ...(s.intervalMs !== undefined ? { intervalMs: s.intervalMs } : {}),
      ...(s.status === 'active' ? { nextChargeAt: iso(s.nextChargeAt) } : {}),
      nextDueDates:
        s.status === 'active'
          ? upcomingDueDates(this.input, s, this.chargeInFlight(), Date.now()).map(iso)
          : [],
      ...(s.pendingChanges
        ? {
            pendingChanges: s.pendingChanges.map((c) => ({
              fromPeriod: c.fromPeriod,
              ...(c.amount !== undefined ? { amount: c.amount } : {}),
              ...(c.schedule ? { schedule: { ...c.schedule } } : {}),
            })),
          }
        : {}),
      ...(this.input.trialEnd !== undefined ? { trialEnd: iso(this.input.trialEnd) } : {}),
      ...(this.input.endAfterPeriods !== undefined ? { endAfterPeriods: this.input.endAfterPeriods } : {}),
      ...(this.input.endAt !== undefined ? { endAt: iso(this.input.endAt) } : {}),
      period: s.period,
      charges: s.charges.map((c) => ({ ...c })),
      totals: { ...s.totals },
      ...(s.dunning ? { dunning: { ...s.dunning } } : {}),
      dunningPolicy: this.input.dunning,
      ...(s.canceledReason ? { canceledReason: s.canceledReason } : {}),
      runs: s.runs,
      createdAt: s.createdAt,
    };
  }
}
