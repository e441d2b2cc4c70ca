/**
 * Recurring billing (DESIGN decision 8): one long-lived workflow per subscription.
 *
 *   wait (durable timer) until the next charge is due
 *   -> charge the period: a provider session for (period, attempt), charged by a child checkout
 *      workflow whose id is that session's id (ABANDON: a started charge always finishes)
 *   -> paid: schedule the next period; failed: dunning retries after the configured delays, each
 *      a new attempt with its own key; every retry failed: past_due, then cancel or stay past_due
 *   cancel / pause / resume / change arrive as validated Updates; the `subscription` query shows it all;
 *   continue-as-new after `periodsPerRun` periods (or when Temporal suggests it) bounds the history.
 *
 * The workflow id is `sub-<reference>`, not a provider session id (DESIGN decision 1): no provider
 * session backs a subscription as a whole, each charge is its own session (and its own workflow).
 */
import * as wf from '@temporalio/workflow';
import type { SubscriptionActivities } from '../activities/types';
import { AmountMinor, PaymentStatus, sessionSearchAttributes } from '../common/search-attributes';
import { checkoutWorkflow } from './checkout';
import {
  cancelSubscriptionUpdate,
  changeSubscriptionUpdate,
  pauseSubscriptionUpdate,
  resumeSubscriptionUpdate,
  subscriptionQuery,
} from './definitions';
import { provider } from './session-run';
import { phaseOf } from './snapshot';
import {
  SUBSCRIPTION_LIMITS,
  type ChargeRecord,
  type SubscriptionChange,
  type SubscriptionInput,
  type SubscriptionState,
  type SubscriptionStatus,
  type SubscriptionView,
} from './subscription-types';
import { FINAL_PHASES, type SessionInput } from './types';

export const DEFAULT_PERIODS_PER_RUN = 100;
/** The charge history the workflow keeps (and carries across continue-as-new); totals count them all. */
export const MAX_CHARGES_KEPT = 50;

const billing = wf.proxyActivities<SubscriptionActivities>({
  startToCloseTimeout: '45s',
  retry: { initialInterval: '500ms', backoffCoefficient: 2, maximumInterval: '20s', maximumAttempts: 10 },
});

const iso = (ms: number) => new Date(ms).toISOString();

interface Outcome {
  ok: boolean;
  reason?: string;
}

export async function subscriptionWorkflow(
  input: SubscriptionInput,
  carried?: SubscriptionState,
): Promise<SubscriptionView> {
  const sub = new Subscription(input, carried ?? firstState(input));
  const periodsPerRun = input.periodsPerRun ?? DEFAULT_PERIODS_PER_RUN;
  let periodsThisRun = 0;

  while (!sub.canceled()) {
    if (periodsThisRun >= periodsPerRun || wf.workflowInfo().continueAsNewSuggested) {
      await wf.condition(wf.allHandlersFinished);
      if (!sub.canceled()) {
        await wf.continueAsNew<typeof subscriptionWorkflow>(input, sub.carry());
      }
      continue;
    }
    if (sub.state.status !== 'active') {
      await sub.untilResumedOrCanceled();
      continue;
    }
    if (!(await sub.untilDue())) continue;
    const outcome = await sub.charge();
    if (sub.settle(outcome)) periodsThisRun++;
  }
  await wf.condition(wf.allHandlersFinished);
  return sub.view();
}

function firstState(input: SubscriptionInput): SubscriptionState {
  const now = Date.now();
  const first = Math.max(input.firstChargeAt ?? now, now);
  return {
    status: 'active',
    amount: { ...input.amount },
    token: input.token,
    intervalMs: input.intervalMs,
    period: 1,
    attempt: 0,
    periodDueAt: first,
    nextChargeAt: first,
    charges: [],
    totals: { attempts: 0, succeeded: 0, failed: 0, chargedAmount: 0 },
    runs: 0,
    createdAt: iso(now),
  };
}

class Subscription {
  /** Bumped by every accepted Update: a waiting loop wakes up and looks again. */
  private version = 0;
  private current: ChargeRecord | undefined;

  constructor(
    readonly input: SubscriptionInput,
    readonly state: SubscriptionState,
  ) {
    wf.upsertSearchAttributes(
      sessionSearchAttributes({
        kind: 'subscription',
        status: state.status,
        reference: input.reference,
        amount: state.amount.amount,
        currency: state.amount.currency,
      }),
    );
    wf.setHandler(subscriptionQuery, () => this.view());
    wf.setHandler(cancelSubscriptionUpdate, (arg) => this.cancel(arg?.reason ?? 'canceled by the partner'), {
      validator: (_arg) => this.refuseWhen(['canceled'], 'cancel'),
    });
    wf.setHandler(pauseSubscriptionUpdate, () => this.pause(), {
      validator: () => this.refuseWhen(['paused', 'past_due', 'canceled'], 'pause'),
    });
    wf.setHandler(resumeSubscriptionUpdate, () => this.resume(), {
      validator: () => this.refuseWhen(['active', 'canceled'], 'resume'),
    });
    wf.setHandler(changeSubscriptionUpdate, (change) => this.change(change), {
      validator: (change) => {
        this.refuseWhen(['canceled'], 'change');
        checkChange(change);
      },
    });
  }

  canceled(): boolean {
    return this.state.status === 'canceled';
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

  /**
   * One attempt: the provider session for (period, attempt) by an idempotent activity, then the
   * child checkout workflow under that session's id, to its end.
   */
  async charge(): Promise<Outcome> {
    const s = this.state;
    const money = (s.periodAmount ??= { ...s.amount });
    const session = await billing.initiateRecurringSession(this.input.subscriptionId, s.period, s.attempt, {
      sum_info: { sum: money.amount, currency_code: money.currency },
      user_info: this.input.customer,
    });
    const record: ChargeRecord = {
      period: s.period,
      attempt: s.attempt,
      sessionId: session.id,
      amount: money.amount,
      currency: money.currency,
      startedAt: iso(Date.now()),
      outcome: 'pending',
    };
    this.current = record;
    s.charges.push(record);
    if (s.charges.length > MAX_CHARGES_KEPT) s.charges.splice(0, s.charges.length - MAX_CHARGES_KEPT);
    s.totals.attempts++;

    const reference = `${this.input.reference}:p${s.period}${s.attempt ? `:r${s.attempt}` : ''}`;
    const sessionInput: SessionInput = {
      sessionId: session.id,
      kind: 'recurring_payment',
      reference,
      money,
      // The token of the subscription now: a token changed during dunning is used by the next retry.
      start: {
        by: 'workflow',
        operation: 'checkout',
        body: { payment_info: { type: 'recurring_token_info', recurring_token_info: { token: s.token } } },
      },
      settings: this.input.settings,
      initialSnapshot: session,
    };
    try {
      const child = await wf.startChild(checkoutWorkflow, {
        workflowId: session.id,
        args: [sessionInput],
        parentClosePolicy: wf.ParentClosePolicy.ABANDON,
        typedSearchAttributes: sessionSearchAttributes({
          kind: 'recurring_payment',
          status: 'starting',
          reference,
          amount: money.amount,
          currency: money.currency,
        }),
      });
      const result = await child.result();
      if (result.phase === 'succeeded') return { ok: true };
      const error = result.operations.at(-1)?.error;
      return { ok: false, reason: result.reason ?? `charge ${result.phase}${error ? `: ${error}` : ''}` };
    } catch (err) {
      // The child could not run to a result (its id was taken, or it failed as a workflow): the
      // provider's state of the session is the truth of whether money moved.
      // (WorkflowExecutionAlreadyStartedError is a TemporalFailure too.)
      if (!(err instanceof wf.TemporalFailure)) throw err;
      return this.outcomeFromProvider(session.id, err.message);
    }
  }

  /** Reads transaction/state until the session's payment is final, within the session deadline. */
  private async outcomeFromProvider(sessionId: string, why: string): Promise<Outcome> {
    const deadline = Date.now() + this.input.settings.deadlines.sessionMs;
    let wait = this.input.settings.polling.initialMs;
    for (;;) {
      const phase = phaseOf(await provider.getState(sessionId));
      if (phase === 'succeeded') return { ok: true };
      if (FINAL_PHASES.includes(phase)) return { ok: false, reason: `charge ${phase} (${why})` };
      if (Date.now() + wait > deadline)
        return { ok: false, reason: `charge_unknown: the session did not finish in time (${why})` };
      await wf.sleep(wait);
      wait = Math.min(wait * 2, this.input.settings.polling.maxMs);
    }
  }

  /**
   * Records the attempt and decides what comes next. True when the period is over (paid, or given
   * up after the last dunning retry).
   */
  settle(outcome: Outcome): boolean {
    const s = this.state;
    const now = Date.now();
    const record = this.current;
    if (record) {
      record.outcome = outcome.ok ? 'succeeded' : 'failed';
      record.finishedAt = iso(now);
      if (outcome.reason) record.reason = outcome.reason;
    }
    this.current = undefined;
    if (outcome.ok) {
      s.totals.succeeded++;
      s.totals.chargedAmount += record?.amount ?? 0;
      delete s.dunning;
      this.nextPeriod(now);
      return true;
    }
    s.totals.failed++;
    const delays = this.input.dunning.retryDelaysMs;
    const failures = s.attempt + 1;
    const lastReason = outcome.reason ?? 'charge failed';
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
      return false;
    }
    s.dunning = { period: s.period, failures, lastReason, exhausted: true };
    this.nextPeriod(now);
    if (s.status !== 'canceled') {
      this.setStatus('past_due');
      if (this.input.dunning.onExhausted === 'cancel') {
        this.cancel(`past_due: period ${s.dunning.period} unpaid after ${failures} attempts (${lastReason})`);
      }
    }
    return true;
  }

  /** Anchored on the due time, not on when the charge finished; a late schedule starts now. */
  private nextPeriod(now: number): void {
    const s = this.state;
    s.period++;
    s.attempt = 0;
    delete s.periodAmount;
    s.periodDueAt = Math.max(s.periodDueAt + s.intervalMs, now);
    s.nextChargeAt = s.periodDueAt;
  }

  // ---- Updates ----

  private refuseWhen(statuses: SubscriptionStatus[], what: string): void {
    if (statuses.includes(this.state.status))
      throw new Error(
        `state.invalid: ${what} is not possible while the subscription is ${this.state.status}`,
      );
  }

  private setStatus(status: SubscriptionStatus): void {
    if (this.state.status === status) return;
    this.state.status = status;
    wf.upsertSearchAttributes([{ key: PaymentStatus, value: status }]);
  }

  /** A charge already started finishes (its child is abandoned, never canceled); none follows. */
  private cancel(reason: string): SubscriptionView {
    this.state.canceledReason = reason;
    this.setStatus('canceled');
    this.version++;
    return this.view();
  }

  private pause(): SubscriptionView {
    this.setStatus('paused');
    this.version++;
    return this.view();
  }

  /** Periods missed while paused are not charged: when the due time has passed, the next charge is now. */
  private resume(): SubscriptionView {
    const s = this.state;
    const now = Date.now();
    if (s.nextChargeAt < now) {
      s.nextChargeAt = now;
      if (s.attempt === 0) s.periodDueAt = now;
    }
    this.setStatus('active');
    this.version++;
    return this.view();
  }

  /** From the next period: the amount of a period being charged (or retried) stays. */
  private change(change: SubscriptionChange): SubscriptionView {
    const s = this.state;
    if (change.amount !== undefined) {
      s.amount = { ...s.amount, amount: change.amount };
      wf.upsertSearchAttributes([{ key: AmountMinor, value: change.amount }]);
    }
    if (change.token !== undefined) s.token = change.token;
    if (change.intervalMs !== undefined) s.intervalMs = change.intervalMs;
    this.version++;
    return this.view();
  }

  // ---- reading ----

  carry(): SubscriptionState {
    return { ...this.state, runs: this.state.runs + 1 };
  }

  view(): SubscriptionView {
    const s = this.state;
    return {
      subscriptionId: this.input.subscriptionId,
      reference: this.input.reference,
      status: s.status,
      amount: { ...s.amount },
      token: s.token,
      intervalMs: s.intervalMs,
      ...(s.status === 'active' ? { nextChargeAt: iso(s.nextChargeAt) } : {}),
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

/** The synchronous refusal of a bad change: the message names the field and the rule. */
function checkChange(change: SubscriptionChange | undefined): void {
  if (!change || typeof change !== 'object')
    throw new Error('change.required: send amount, token or intervalMs');
  const { amount, token, intervalMs } = change;
  if (amount === undefined && token === undefined && intervalMs === undefined)
    throw new Error('change.empty: send at least one of amount, token, intervalMs');
  if (amount !== undefined && (!Number.isSafeInteger(amount) || amount <= 0))
    throw new Error('amount.positive: the amount must be a positive integer (minor units)');
  if (
    token !== undefined &&
    (typeof token !== 'string' || !token || token.length > SUBSCRIPTION_LIMITS.maxTokenLength)
  )
    throw new Error(
      `token.invalid: a non-empty string of at most ${SUBSCRIPTION_LIMITS.maxTokenLength} characters`,
    );
  if (
    intervalMs !== undefined &&
    (!Number.isSafeInteger(intervalMs) ||
      intervalMs < SUBSCRIPTION_LIMITS.minIntervalMs ||
      intervalMs > SUBSCRIPTION_LIMITS.maxIntervalMs)
  )
    throw new Error(
      `intervalMs.range: an integer from ${SUBSCRIPTION_LIMITS.minIntervalMs} to ${SUBSCRIPTION_LIMITS.maxIntervalMs}`,
    );
}
