/**
 * Recurring billing: one workflow per subscription, id `sub-<reference>` (no provider session backs a
 * subscription; each charge is its own session). Named by its reference: the same request returns the same
 * subscription, running or finished; another request under the same reference is refused (409). The rules
 * a billing engineer needs are in docs/billing.md.
 */
import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  type WorkflowHandle,
} from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
import { DEFAULT_TIME_ZONE } from '../common/billing-calendar';
import { declineCodes } from '../common/billing-policy';
import {
  cancelSubscriptionUpdate,
  changeSubscriptionUpdate,
  collectOwedUpdate,
  pauseSubscriptionUpdate,
  resumeSubscriptionUpdate,
  subscriptionQuery,
  writeOffOwedUpdate,
} from '../common/messages';
import { sessionSearchAttributes } from '../common/search-attributes';
import { mergeSettings } from '../common/settings';
import type { SubscriptionInput } from '../common/subscription-input';
import type { SubscriptionView } from '../common/views';
import type { subscriptionWorkflow } from '../workflows/subscription';
import type { ClientContext } from './context';
import { parse } from './context';
import {
  fromWorkflowFailure,
  ReferenceConflictError,
  SessionStateError,
  SubscriptionNotFoundError,
} from './errors';
import { requestFingerprint } from './fingerprint';
import * as inputs from './subscription-inputs';
import { queryWithRetry } from './query';
import { storedPeriods, storedSubscription, type PeriodQuery } from '../store/subscriptions';
import type { PeriodPage } from '../common/views';
import { started, type Started } from './reads';
import { searchSubscriptions, type SubscriptionPage, type SubscriptionSearch } from './search';
import { explainTemporalFailure } from './workflow-health';

export const SUBSCRIPTION_ID_PREFIX = 'sub-';
export const subscriptionIdOf = (reference: string): string => `${SUBSCRIPTION_ID_PREFIX}${reference}`;

export interface SubscriptionsOptions {
  /** The provider's test environment: periods under a day and delays under a minute are allowed. */
  testMode?: boolean;
}

export class Subscriptions {
  private readonly testMode: boolean;

  constructor(
    private readonly ctx: ClientContext,
    o: SubscriptionsOptions = {},
  ) {
    this.testMode = o.testMode === true;
  }

  async start(input: inputs.SubscriptionStartInput): Promise<Started<SubscriptionView>> {
    const i = parse(inputs.subscriptionInput, input);
    const dunning = i.dunning ?? inputs.dunningInput.parse({});
    const policy = i.policy ?? inputs.billingPolicyInput.parse({});
    inputs.checkForEnvironment({ schedule: i.schedule, dunning, policy }, this.testMode);
    const subscriptionId = subscriptionIdOf(i.reference);
    const fingerprint = requestFingerprint({ kind: 'subscription', request: i });
    const args: SubscriptionInput = {
      subscriptionId,
      reference: i.reference,
      token: i.token,
      amount: i.amount,
      schedule: { ...i.schedule, timeZone: i.schedule.timeZone ?? DEFAULT_TIME_ZONE },
      ...(i.trialEnd !== undefined ? { trialEnd: i.trialEnd } : {}),
      ...(i.endAfterPeriods !== undefined ? { endAfterPeriods: i.endAfterPeriods } : {}),
      ...(i.endAt !== undefined ? { endAt: i.endAt } : {}),
      dunning: {
        retryDelaysMs: dunning.retryDelaysMs,
        onExhausted: dunning.onExhausted,
        declineCodes: declineCodes(dunning.declineCodes),
        otherDeclines: dunning.otherDeclines,
        unavailableRetryMs: dunning.unavailableRetryMs,
      },
      policy,
      testMode: this.testMode,
      settings: mergeSettings(this.ctx.settings, i.settings),
      customer: i.customer as Record<string, unknown>,
      ...(i.submerchantId ? { submerchantId: i.submerchantId } : {}),
      ...this.ctx.projectOf('recurring_payment'),
    };
    let created = true;
    try {
      await this.ctx.temporal.workflow.start<typeof subscriptionWorkflow>('subscriptionWorkflow', {
        workflowId: subscriptionId,
        taskQueue: this.ctx.taskQueue,
        args: [args],
        // A subscription is started once: running or finished, its reference stays taken.
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        memo: { fingerprint },
        typedSearchAttributes: sessionSearchAttributes({
          kind: 'subscription',
          status: 'active',
          reference: i.reference,
          amount: i.amount.amount,
          currency: i.amount.currency,
          createdAt: new Date(),
        }),
      });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      created = false;
      const { memo } = await this.handle(subscriptionId).describe();
      if (memo?.fingerprint !== fingerprint)
        throw new ReferenceConflictError(
          'already used for another subscription (a repeat must be the same request)',
        );
    }
    return started(await this.get(subscriptionId), created);
  }

  /** Subscriptions by reference, status and creation time, a page at a time (client/search.ts). */
  list(search: SubscriptionSearch = {}): Promise<SubscriptionPage> {
    return searchSubscriptions(this.ctx.store, search);
  }

  /**
   * The subscription as the store holds it (an Update answers once its change is stored, so this shows
   * it), whatever Temporal still keeps of a finished one; one the store has not recorded yet (just started)
   * is read from its workflow.
   */
  async get(subscriptionId: string): Promise<SubscriptionView> {
    if (!subscriptionId.startsWith(SUBSCRIPTION_ID_PREFIX))
      throw new SubscriptionNotFoundError(subscriptionId);
    const stored = await storedSubscription(this.ctx.store, subscriptionId);
    if (stored) return stored;
    return queryWithRetry(
      this.handle(subscriptionId),
      subscriptionQuery,
      () => new SubscriptionNotFoundError(subscriptionId),
    );
  }

  /** Every period the store holds (with its attempts), by period number; `status: 'owed'` for what is owed. */
  async periods(subscriptionId: string, query: PeriodQuery = {}): Promise<PeriodPage> {
    await this.get(subscriptionId); // 404 for an unknown one
    return storedPeriods(this.ctx.store, subscriptionId, query);
  }

  /** No charge while paused; no period falls due meanwhile. `resumeAt`: resumes on its own then. */
  async pause(
    subscriptionId: string,
    options: inputs.SubscriptionPauseInput = {},
  ): Promise<SubscriptionView> {
    const o = parse(inputs.subscriptionPauseInput, options);
    return this.update(subscriptionId, (h) =>
      h.executeUpdate(pauseSubscriptionUpdate, {
        args: [o.resumeAt !== undefined ? { resumeAt: o.resumeAt } : {}],
      }),
    );
  }

  /**
   * From paused or past_due: the billing day stays (the first due date from now), unless `restart` bills
   * from now on. From active with a cancel at the period end: the cancel is withdrawn.
   */
  async resume(
    subscriptionId: string,
    options: inputs.SubscriptionResumeInput = {},
  ): Promise<SubscriptionView> {
    const o = parse(inputs.subscriptionResumeInput, options);
    return this.update(subscriptionId, (h) =>
      h.executeUpdate(resumeSubscriptionUpdate, { args: [o.restart ? { restart: true } : {}] }),
    );
  }

  /**
   * At once (a charge already started finishes; a period in dunning is owed), or `atPeriodEnd`: no charge
   * after the period paid for, then canceled. `options` may be the reason alone.
   */
  async cancel(
    subscriptionId: string,
    options: inputs.SubscriptionCancelInput | string = {},
  ): Promise<SubscriptionView> {
    const i = parse(
      inputs.subscriptionCancelInput,
      typeof options === 'string' ? { reason: options } : options,
    );
    return this.update(subscriptionId, (h) =>
      h.executeUpdate(cancelSubscriptionUpdate, {
        args: [
          { ...(i.reason ? { reason: i.reason } : {}), ...(i.atPeriodEnd ? { atPeriodEnd: true } : {}) },
        ],
      }),
    );
  }

  /**
   * Amount and/or schedule from a period (default the next to fall due), prorated per `proration`; a
   * token and the payer's details from the next attempt.
   */
  async change(subscriptionId: string, change: inputs.SubscriptionChangeInput): Promise<SubscriptionView> {
    const c = parse(inputs.subscriptionChangeInput, change);
    inputs.checkForEnvironment({ ...(c.schedule ? { schedule: c.schedule } : {}) }, this.testMode);
    return this.update(subscriptionId, (h) =>
      h.executeUpdate(changeSubscriptionUpdate, {
        args: [
          {
            ...(c.amount !== undefined ? { amount: c.amount } : {}),
            ...(c.token !== undefined ? { token: c.token } : {}),
            ...(c.customer !== undefined ? { customer: c.customer as Record<string, unknown> } : {}),
            ...(c.schedule ? { schedule: c.schedule } : {}),
            ...(c.fromPeriod !== undefined ? { fromPeriod: c.fromPeriod } : {}),
            ...(c.proration !== undefined ? { proration: c.proration } : {}),
          },
        ],
      }),
    );
  }

  /** Charges owed periods now, one at a time, oldest first (default: every one owed). */
  async collect(subscriptionId: string, input: inputs.CollectInput = {}): Promise<SubscriptionView> {
    const i = parse(inputs.collectInput, input);
    return this.update(subscriptionId, (h) =>
      h.executeUpdate(collectOwedUpdate, { args: [i.periods ? { periods: i.periods } : {}] }),
    );
  }

  /** Owed periods nobody will collect (default: every one owed), recorded with the partner's words. */
  async writeOff(subscriptionId: string, input: inputs.WriteOffInput = {}): Promise<SubscriptionView> {
    const i = parse(inputs.writeOffInput, input);
    return this.update(subscriptionId, (h) =>
      h.executeUpdate(writeOffOwedUpdate, {
        args: [{ ...(i.periods ? { periods: i.periods } : {}), ...(i.reason ? { reason: i.reason } : {}) }],
      }),
    );
  }

  private handle(subscriptionId: string): WorkflowHandle {
    return this.ctx.temporal.workflow.getHandle(subscriptionId);
  }

  /**
   * A finished subscription answers Updates with "not found": a state conflict. An Update that reached a
   * run just as it continued as new (each billing period is a run) was never carried out: it is asked
   * again of the next run.
   */
  private async update(
    subscriptionId: string,
    run: (h: WorkflowHandle) => Promise<SubscriptionView>,
  ): Promise<SubscriptionView> {
    if (!subscriptionId.startsWith(SUBSCRIPTION_ID_PREFIX))
      throw new SubscriptionNotFoundError(subscriptionId);
    for (let attempt = 1; ; attempt++) {
      try {
        return await run(this.handle(subscriptionId));
      } catch (err) {
        if (
          err instanceof WorkflowNotFoundError &&
          attempt < UPDATE_ATTEMPTS &&
          (await this.running(subscriptionId))
        )
          continue;
        throw await this.updateFailure(subscriptionId, err);
      }
    }
  }

  private async running(subscriptionId: string): Promise<boolean> {
    const d = await this.handle(subscriptionId)
      .describe()
      .catch(() => undefined);
    return d?.status.name === 'RUNNING';
  }

  private async updateFailure(subscriptionId: string, err: unknown): Promise<unknown> {
    if (err instanceof WorkflowNotFoundError) {
      const view = await this.get(subscriptionId);
      return new SessionStateError(
        `subscription ${subscriptionId} is ${view.status}; nothing can change`,
        'subscription_final',
      );
    }
    return (
      fromWorkflowFailure(err, subscriptionId) ??
      (await explainTemporalFailure(this.ctx.temporal, subscriptionId, err))
    );
  }
}

/** An Update is asked of at most this many runs (a run continues as new at most once per period). */
const UPDATE_ATTEMPTS = 5;
