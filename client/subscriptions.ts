/**
 * Recurring billing: one workflow per subscription, id `sub-<reference>` (no provider session backs a
 * subscription; each charge is its own session). Named by its reference: the same request returns the same
 * subscription, running or finished; another request under the same reference is refused (409).
 */
import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  type WorkflowHandle,
} from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
import {
  cancelSubscriptionUpdate,
  changeSubscriptionUpdate,
  pauseSubscriptionUpdate,
  resumeSubscriptionUpdate,
  subscriptionQuery,
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
import * as inputs from './inputs';
import { queryWithRetry } from './query';
import { storedSubscription } from '../store/subscriptions';
import { started, type Started } from './reads';
import { searchSubscriptions, type SubscriptionPage, type SubscriptionSearch } from './search';
import { explainTemporalFailure } from './workflow-health';

export const SUBSCRIPTION_ID_PREFIX = 'sub-';
export const subscriptionIdOf = (reference: string): string => `${SUBSCRIPTION_ID_PREFIX}${reference}`;

export class Subscriptions {
  constructor(private readonly ctx: ClientContext) {}

  async start(input: inputs.SubscriptionStartInput): Promise<Started<SubscriptionView>> {
    const i = parse(inputs.subscriptionInput, input);
    const subscriptionId = subscriptionIdOf(i.reference);
    const fingerprint = requestFingerprint({ kind: 'subscription', request: i });
    const args: SubscriptionInput = {
      subscriptionId,
      reference: i.reference,
      token: i.token,
      amount: i.amount,
      ...(i.schedule ? { schedule: i.schedule } : {}),
      ...(i.intervalMs !== undefined ? { intervalMs: i.intervalMs } : {}),
      ...(i.firstChargeAt !== undefined ? { firstChargeAt: i.firstChargeAt } : {}),
      ...(i.trialEnd !== undefined ? { trialEnd: i.trialEnd } : {}),
      ...(i.endAfterPeriods !== undefined ? { endAfterPeriods: i.endAfterPeriods } : {}),
      ...(i.endAt !== undefined ? { endAt: i.endAt } : {}),
      dunning: i.dunning ?? {
        retryDelaysMs: [...inputs.DEFAULT_DUNNING.retryDelaysMs],
        onExhausted: inputs.DEFAULT_DUNNING.onExhausted,
      },
      settings: mergeSettings(this.ctx.settings, i.settings),
      customer: i.customer as Record<string, unknown>,
      ...(i.submerchantId ? { submerchantId: i.submerchantId } : {}),
      ...this.ctx.projectOf('recurring_payment'),
      ...(i.periodsPerRun ? { periodsPerRun: i.periodsPerRun } : {}),
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
   * it), whatever Temporal still keeps of a canceled one; a subscription whose run began before the store
   * recorded subscriptions, and has not changed since, is read from its workflow.
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

  /** No charge while paused; periods that fall due meanwhile are not charged later. */
  async pause(subscriptionId: string): Promise<SubscriptionView> {
    return this.update(subscriptionId, (h) => h.executeUpdate(pauseSubscriptionUpdate, { args: [] }));
  }

  /**
   * From paused or past_due. A calendar schedule keeps its billing day (the next due date from now;
   * periods that fell due while paused are not charged) unless `restart` bills from now on; with
   * intervalMs, a due time already passed is charged at once.
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

  /** No further charge; a charge already started finishes. */
  async cancel(subscriptionId: string, reason?: string): Promise<SubscriptionView> {
    const i = parse(inputs.subscriptionCancelInput, reason !== undefined ? { reason } : {});
    return this.update(subscriptionId, (h) =>
      h.executeUpdate(cancelSubscriptionUpdate, { args: [i.reason ? { reason: i.reason } : {}] }),
    );
  }

  /** Amount and/or schedule from a period (default the next not started), a token from the next attempt. */
  async change(subscriptionId: string, change: inputs.SubscriptionChangeInput): Promise<SubscriptionView> {
    const c = parse(inputs.subscriptionChangeInput, change);
    return this.update(subscriptionId, (h) =>
      h.executeUpdate(changeSubscriptionUpdate, {
        args: [
          {
            ...(c.amount !== undefined ? { amount: c.amount } : {}),
            ...(c.token !== undefined ? { token: c.token } : {}),
            ...(c.intervalMs !== undefined ? { intervalMs: c.intervalMs } : {}),
            ...(c.schedule ? { schedule: c.schedule } : {}),
            ...(c.fromPeriod !== undefined ? { fromPeriod: c.fromPeriod } : {}),
          },
        ],
      }),
    );
  }

  private handle(subscriptionId: string): WorkflowHandle {
    return this.ctx.temporal.workflow.getHandle(subscriptionId);
  }

  /** A finished (canceled) subscription answers Updates with "not found": a state conflict. */
  private async update(
    subscriptionId: string,
    run: (h: WorkflowHandle) => Promise<SubscriptionView>,
  ): Promise<SubscriptionView> {
    if (!subscriptionId.startsWith(SUBSCRIPTION_ID_PREFIX))
      throw new SubscriptionNotFoundError(subscriptionId);
    try {
      return await run(this.handle(subscriptionId));
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) {
        const view = await this.get(subscriptionId);
        throw new SessionStateError(
          `subscription ${subscriptionId} is ${view.status}; nothing can change`,
          'subscription_final',
        );
      }
      throw (
        fromWorkflowFailure(err, subscriptionId) ??
        (await explainTemporalFailure(this.ctx.temporal, subscriptionId, err))
      );
    }
  }
}
