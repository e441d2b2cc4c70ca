/**
 * The starter and follower of sessions, for backend services and the HTTP API. It creates the
 * provider session (idempotently, keyed by the caller's reference), starts the workflow whose id is
 * the session id, and sends card data to the provider itself so it never enters Temporal.
 */
import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowFailedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  type WorkflowHandle,
  type Client,
} from '@temporalio/client';
import { WorkflowIdConflictPolicy, WorkflowIdReusePolicy, type QueryDefinition } from '@temporalio/common';
import type { z } from 'zod';
import { scrubCardData } from '../activities/failures';
import {
  deriveIdempotencyKey,
  ProviderError,
  ProviderUnavailableError,
  type ProviderClient,
} from '../provider';
import type { SessionInfo } from '../provider/schemas';
import {
  ClientReference,
  PaymentKind,
  PaymentStatus,
  sessionSearchAttributes,
} from '../common/search-attributes';
import {
  approveUpdate,
  awaitProgressUpdate,
  cancelSubscriptionUpdate,
  cancelUpdate,
  changeSubscriptionUpdate,
  finalizeUpdate,
  pauseSubscriptionUpdate,
  payerReturnedSignal,
  providerEventSignal,
  resumeSubscriptionUpdate,
  sessionQuery,
  START_RESPONSE,
  startFailedSignal,
  subscriptionQuery,
} from '../workflows/definitions';
import type { identityCheckIntakeWorkflow } from '../workflows/identity-check';
import type { SubscriptionInput, SubscriptionView } from '../workflows/subscription-types';
import type {
  Money,
  ReconcilerInput,
  SessionInput,
  SessionKind,
  SessionSettings,
  SessionView,
  StartSpec,
  IdentityCheckIntakeResult,
} from '../workflows/types';
import {
  InputValidationError,
  SessionNotFoundError,
  SessionStateError,
  SubscriptionNotFoundError,
} from './errors';
import { identityCheckIntakeId, requestFingerprint } from './identity-check';
import * as inputs from './inputs';
import { queryWithRetry } from './query';
import { ensureReconciler } from './reconciler';
import { signedReturnSettings, type SessionReturnUrls } from './return-url';
import { DEFAULT_SETTINGS, mergeSettings } from './settings';

const WORKFLOW_OF: Record<SessionKind, string> = {
  card_checkout: 'checkoutWorkflow',
  payment_form: 'checkoutWorkflow',
  recurring_payment: 'checkoutWorkflow',
  fps_payment: 'fpsPaymentWorkflow',
  fps_binding: 'fpsBindingWorkflow',
  payout: 'payoutWorkflow',
  identity_check: 'identityCheckWorkflow',
  refund: 'refundWorkflow',
  late_event: 'lateEventWorkflow',
};

/** Subscriptions are workflows `sub-<reference>`: never a provider session id (ps_...). */
export const SUBSCRIPTION_ID_PREFIX = 'sub-';
export const subscriptionIdOf = (reference: string): string => `${SUBSCRIPTION_ID_PREFIX}${reference}`;

export interface PaymentsClientOptions {
  temporal: Client;
  provider: ProviderClient;
  taskQueue: string;
  settings?: SessionSettings;
  /** paysaga's signed return page as each session's back_url (client/return-url.ts); unset: the caller's backUrl. */
  returnUrls?: SessionReturnUrls;
}

export interface StartOptions {
  /** Wait up to this long for the payer's action (3-DS, QR) or a result before answering. */
  waitMs?: number;
}

function parse<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const r = schema.safeParse(input);
  if (!r.success) throw InputValidationError.fromZod(r.error);
  return r.data;
}

type Common = {
  reference: string;
  customer?: object;
  participant?: object;
  extraInfo?: unknown;
  settings?: inputs.CardCheckoutInput['settings'];
};

export class PaymentsClient {
  readonly settings: SessionSettings;
  constructor(private readonly opts: PaymentsClientOptions) {
    this.settings = opts.settings ?? DEFAULT_SETTINGS;
  }

  /** Card data held by the partner: sent to the provider by this process, never through Temporal. */
  async startCardCheckout(input: inputs.CardCheckoutInput, o: StartOptions = {}): Promise<SessionView> {
    const i = parse(inputs.cardCheckoutInput, input);
    const settingsBody = this.paymentSettings(i.backUrl, i.allowRecurring);
    return this.start(
      'card_checkout',
      i,
      i.amount,
      { by: 'starter' },
      this.initiateBody(i, i.amount, settingsBody),
      o,
      (sessionId, key) =>
        this.opts.provider.startCheckout(
          {
            session_id: sessionId,
            payment_info: { type: 'card_info', card_info: { type: 'card_details', card_details: i.card } },
            ...signedReturnSettings(this.opts.returnUrls, sessionId, settingsBody),
          },
          { idempotencyKey: key },
        ),
    );
  }

  async startPaymentForm(input: inputs.PaymentFormInput, o: StartOptions = {}): Promise<SessionView> {
    const i = parse(inputs.paymentFormInput, input);
    const body = this.initiateBody(i, i.amount, this.paymentSettings(i.backUrl));
    return this.start('payment_form', i, i.amount, { by: 'widget', widget: i.widget }, body, o);
  }

  async startRecurringPayment(
    input: inputs.RecurringPaymentInput,
    o: StartOptions = {},
  ): Promise<SessionView> {
    const i = parse(inputs.recurringPaymentInput, input);
    const payment_info = {
      type: 'recurring_token_info',
      recurring_token_info: {
        token: i.token,
        ...(i.initiatedBy === 'client' ? { initiated_by: 'client' } : {}),
      },
    };
    const start: StartSpec = { by: 'workflow', operation: 'checkout', body: { payment_info } };
    return this.start(
      'recurring_payment',
      i,
      i.amount,
      start,
      this.initiateBody(i, i.amount, this.paymentSettings(i.backUrl)),
      o,
    );
  }

  async startFpsPayment(input: inputs.FpsPaymentInput, o: StartOptions = {}): Promise<SessionView> {
    const i = parse(inputs.fpsPaymentInput, input);
    const payment_info = {
      type: 'fps_info',
      ...(i.moneyPurpose ? { fps_info: { money_purpose: i.moneyPurpose } } : {}),
    };
    const start: StartSpec = { by: 'workflow', operation: 'checkout', body: { payment_info } };
    return this.start(
      'fps_payment',
      i,
      i.amount,
      start,
      this.initiateBody(i, i.amount, this.paymentSettings(i.backUrl)),
      o,
      undefined,
      i.qrRenewals,
    );
  }

  /** Binding without a charge (spec rule 7): the sum is a placeholder the provider ignores. */
  async startFpsBinding(input: inputs.FpsBindingInput, o: StartOptions = {}): Promise<SessionView> {
    const i = parse(inputs.fpsBindingInput, input);
    const placeholder: Money = { amount: 100, currency: i.currency.toLowerCase() };
    const body = {
      ...this.initiateBody(i, placeholder, this.paymentSettings(i.backUrl, true)),
      payment_info: { type: 'faster_payment_system_binding' },
    };
    return this.start(
      'fps_binding',
      i,
      placeholder,
      { by: 'workflow', operation: 'checkout', body: {} },
      body,
      o,
    );
  }

  async startPayout(input: inputs.PayoutInput, o: StartOptions = {}): Promise<SessionView> {
    const i = parse(inputs.payoutInput, input);
    const d = i.destination;
    const body = this.initiateBody(i, i.amount);
    if (d.type === 'card' || d.type === 'hashed_card') {
      const card_info =
        d.type === 'card'
          ? { type: 'card_details' as const, card_details: d.card }
          : { type: 'hashed_card_details' as const, hashed_card_details: d.card };
      return this.start('payout', i, i.amount, { by: 'starter' }, body, o, (sessionId, key) =>
        this.opts.provider.startTransfer(
          { session_id: sessionId, payout_info: { type: 'card_info', card_info } },
          { idempotencyKey: key },
        ),
      );
    }
    const payout_info =
      d.type === 'tokenized_card'
        ? { type: 'card_info', card_info: { type: 'tokenized_card', tokenized_card: { token: d.token } } }
        : d.type === 'recurring_token'
          ? { type: 'recurring_token_info', recurring_token_info: { token: d.token } }
          : {
              type: 'account_info',
              account_info: {
                payment_system: 'fps_info_verification',
                fps_info_verification: { phone_number: d.phone, bank_identifier: d.bankId },
              },
            };
    return this.start(
      'payout',
      i,
      i.amount,
      { by: 'workflow', operation: 'transfer', body: { payout_info } },
      body,
      o,
    );
  }

  /**
   * sbp/identity_check takes no idempotency key: the check is made by an intake workflow whose id
   * is the reference, so a repeat, even a concurrent one, gets the same session and never a
   * second check. The same reference with another phone, bank or payee is refused.
   */
  async startIdentityCheck(input: inputs.IdentityCheckInput, o: StartOptions = {}): Promise<SessionView> {
    const i = parse(inputs.identityCheckInput, input);
    const request = {
      payout_info: {
        type: 'account_info' as const,
        account_info: {
          payment_system: 'fps_info_verification' as const,
          fps_info_verification: { phone_number: i.phone, bank_identifier: i.bankId },
        },
      },
      participant_info: { payee_info: i.payee },
    };
    this.opts.provider.validate('identityCheck', request);
    const fingerprint = requestFingerprint(request);
    const workflowId = identityCheckIntakeId(i.reference);
    let handle: WorkflowHandle<typeof identityCheckIntakeWorkflow>;
    try {
      handle = await this.opts.temporal.workflow.start('identityCheckIntakeWorkflow', {
        workflowId,
        taskQueue: this.opts.taskQueue,
        args: [
          {
            reference: i.reference,
            request,
            fingerprint,
            settings: mergeSettings(this.settings, i.settings),
          },
        ],
        workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
        // A finished intake answers every repeat; one that failed (the provider unreachable) may run again.
        workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
      });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      handle = this.opts.temporal.workflow.getHandle(workflowId);
    }
    let result: IdentityCheckIntakeResult;
    try {
      result = await handle.result();
    } catch (err) {
      if (!(err instanceof WorkflowFailedError)) throw err;
      throw new ProviderUnavailableError('sbp/identity_check', err.cause?.message ?? err.message);
    }
    if (result.fingerprint !== fingerprint)
      throw new InputValidationError([
        { field: 'reference', rule: 'already used for an identity check of another recipient' },
      ]);
    if ('refused' in result) {
      const r = result.refused;
      throw new ProviderError(r.endpoint, r.errorCode, r.description, r.httpStatus);
    }
    return this.view(result.sessionId, o.waitMs);
  }

  /** A refund workflow under the session's id, once the payment's workflow has finished (one lane per session). */
  async refund(
    sessionId: string,
    input: inputs.RefundRequestInput,
    o: StartOptions = {},
  ): Promise<SessionView> {
    const i = parse(inputs.refundInput, input);
    const current = await this.getSession(sessionId);
    // A repeat of the latest refund request (same reference) is that refund, not a new one.
    if (current.kind === 'refund' && current.reference === i.reference) return this.view(sessionId, o.waitMs);
    const payment = current.operations.find((op) => op.kind === 'payment' && op.status === 'successful');
    if (!payment) throw new SessionStateError(`session ${sessionId} has no successful payment to refund`);
    const refunded = current.operations
      .filter((op) => (op.kind === 'refund' || op.kind === 'chargeback') && op.status !== 'unsuccessful')
      .reduce((n, op) => n + (op.amount ?? 0), 0);
    const amount = i.amount ?? (payment.amount ?? 0) - refunded;
    if (amount <= 0 || amount > (payment.amount ?? 0) - refunded) {
      throw new InputValidationError([
        { field: 'amount', rule: `at most ${(payment.amount ?? 0) - refunded} is left to refund` },
      ]);
    }
    const handle = this.opts.temporal.workflow.getHandle(sessionId);
    if ((await handle.describe()).status.name === 'RUNNING') {
      throw new SessionStateError(
        `session ${sessionId} is still running (${current.kind}: ${current.phase}); refund when it has finished`,
      );
    }
    try {
      await this.opts.temporal.workflow.start('refundWorkflow', {
        workflowId: sessionId,
        taskQueue: this.opts.taskQueue,
        args: [
          {
            sessionId,
            refundReference: i.reference,
            amount,
            currency: payment.currency,
            settings: this.settings,
          },
        ],
        workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
        typedSearchAttributes: sessionSearchAttributes({
          kind: 'refund',
          status: 'starting',
          reference: i.reference,
          amount,
          ...(payment.currency ? { currency: payment.currency } : {}),
        }),
      });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      // Another request started something under this id meanwhile: only the same refund is ours.
      // Its search attributes say what it is without a query, which a run whose first workflow
      // task is still queued on a busy worker may not answer yet.
      const attrs = (await handle.describe()).typedSearchAttributes;
      const kind = attrs.get(PaymentKind);
      const reference = attrs.get(ClientReference);
      if (kind !== 'refund' || reference !== i.reference)
        throw new SessionStateError(
          `session ${sessionId} is busy (${kind} ${reference}: ${attrs.get(PaymentStatus)}); refund when it has finished`,
        );
    }
    return this.view(sessionId, o.waitMs);
  }

  approve(sessionId: string): Promise<SessionView> {
    return this.decide(sessionId, () => this.handle(sessionId).executeUpdate(approveUpdate, { args: [] }));
  }

  cancel(sessionId: string, reason?: string): Promise<SessionView> {
    return this.decide(sessionId, () =>
      this.handle(sessionId).executeUpdate(cancelUpdate, { args: [reason ? { reason } : {}] }),
    );
  }

  finalize(sessionId: string, amount?: number): Promise<SessionView> {
    return this.decide(sessionId, () =>
      this.handle(sessionId).executeUpdate(finalizeUpdate, {
        args: [amount !== undefined ? { amount } : {}],
      }),
    );
  }

  /**
   * Recurring billing: one workflow per subscription, id `sub-<reference>` (no provider session backs
   * a subscription; each charge is its own session and child workflow). Idempotent by reference: the
   * same reference returns the same subscription, running or finished, whatever else the repeat says.
   */
  async startSubscription(input: inputs.SubscriptionStartInput): Promise<SubscriptionView> {
    const i = parse(inputs.subscriptionInput, input);
    const subscriptionId = subscriptionIdOf(i.reference);
    const args: SubscriptionInput = {
      subscriptionId,
      reference: i.reference,
      token: i.token,
      amount: i.amount,
      intervalMs: i.intervalMs,
      ...(i.firstChargeAt !== undefined ? { firstChargeAt: i.firstChargeAt } : {}),
      dunning: i.dunning ?? {
        retryDelaysMs: [...inputs.DEFAULT_DUNNING.retryDelaysMs],
        onExhausted: inputs.DEFAULT_DUNNING.onExhausted,
      },
      settings: mergeSettings(this.settings, i.settings),
      customer: i.customer as Record<string, unknown>,
      ...(i.periodsPerRun ? { periodsPerRun: i.periodsPerRun } : {}),
    };
    try {
      await this.opts.temporal.workflow.start('subscriptionWorkflow', {
        workflowId: subscriptionId,
        taskQueue: this.opts.taskQueue,
        args: [args],
        workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        typedSearchAttributes: sessionSearchAttributes({
          kind: 'subscription',
          status: 'active',
          reference: i.reference,
          amount: i.amount.amount,
          currency: i.amount.currency,
        }),
      });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
    return this.getSubscription(subscriptionId);
  }

  /** The subscription as its latest run knows it (running, or finished when canceled). */
  async getSubscription(subscriptionId: string): Promise<SubscriptionView> {
    if (!subscriptionId.startsWith(SUBSCRIPTION_ID_PREFIX))
      throw new SubscriptionNotFoundError(subscriptionId);
    return this.queryRun(
      subscriptionId,
      subscriptionQuery,
      () => new SubscriptionNotFoundError(subscriptionId),
    );
  }

  /** No charge while paused; periods that fall due meanwhile are not charged later. */
  async pauseSubscription(subscriptionId: string): Promise<SubscriptionView> {
    return this.updateSubscription(subscriptionId, (h) =>
      h.executeUpdate(pauseSubscriptionUpdate, { args: [] }),
    );
  }

  /** From paused or past_due: a due time already passed is charged at once. */
  async resumeSubscription(subscriptionId: string): Promise<SubscriptionView> {
    return this.updateSubscription(subscriptionId, (h) =>
      h.executeUpdate(resumeSubscriptionUpdate, { args: [] }),
    );
  }

  /** No further charge; a charge already started finishes. */
  async cancelSubscription(subscriptionId: string, reason?: string): Promise<SubscriptionView> {
    const i = parse(inputs.subscriptionCancelInput, reason !== undefined ? { reason } : {});
    return this.updateSubscription(subscriptionId, (h) =>
      h.executeUpdate(cancelSubscriptionUpdate, { args: [i.reason ? { reason: i.reason } : {}] }),
    );
  }

  /** Amount, token and/or interval, from the next period on. */
  async changeSubscription(
    subscriptionId: string,
    change: inputs.SubscriptionChangeInput,
  ): Promise<SubscriptionView> {
    const c = parse(inputs.subscriptionChangeInput, change);
    return this.updateSubscription(subscriptionId, (h) =>
      h.executeUpdate(changeSubscriptionUpdate, {
        args: [
          {
            ...(c.amount !== undefined ? { amount: c.amount } : {}),
            ...(c.token !== undefined ? { token: c.token } : {}),
            ...(c.intervalMs !== undefined ? { intervalMs: c.intervalMs } : {}),
          },
        ],
      }),
    );
  }

  /**
   * Validators refuse synchronously: `state.*` is a state conflict, `<field>.<rule>` a bad value. A
   * finished (canceled) subscription answers updates with "not found": that is a state conflict too.
   */
  private async updateSubscription(
    subscriptionId: string,
    run: (h: ReturnType<PaymentsClient['handle']>) => Promise<SubscriptionView>,
  ): Promise<SubscriptionView> {
    if (!subscriptionId.startsWith(SUBSCRIPTION_ID_PREFIX))
      throw new SubscriptionNotFoundError(subscriptionId);
    try {
      return await run(this.handle(subscriptionId));
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) {
        const view = await this.getSubscription(subscriptionId);
        throw new SessionStateError(`subscription ${subscriptionId} is ${view.status}; nothing can change`);
      }
      if (err instanceof WorkflowUpdateFailedError) {
        const message = err.cause?.message ?? err.message;
        const m = /^([A-Za-z]+)\.([a-z_]+): (.*)$/.exec(message);
        if (m && m[1] !== 'state')
          throw new InputValidationError([{ field: m[1] === 'change' ? '(body)' : m[1]!, rule: m[3]! }]);
        throw new SessionStateError(message);
      }
      throw err;
    }
  }

  /** The session as its latest workflow run knows it (running or closed). */
  async getSession(sessionId: string): Promise<SessionView> {
    return this.queryRun(sessionId, sessionQuery, () => new SessionNotFoundError(sessionId));
  }

  private queryRun<T>(workflowId: string, query: QueryDefinition<T>, notFound: () => Error): Promise<T> {
    return queryWithRetry(this.handle(workflowId), query, notFound);
  }

  /**
   * Starts (or finds) the reconciler of this task queue: for deployments without webhooks, it reads
   * recently closed sessions from the provider again so that a later chargeback is recorded.
   */
  startReconciler(input: ReconcilerInput): Promise<string> {
    return ensureReconciler(this.opts.temporal, this.opts.taskQueue, input);
  }

  /** Early return: until the payer's action, a decision point or the result is known, at most `timeoutMs`. */
  async waitForProgress(sessionId: string, timeoutMs: number): Promise<SessionView> {
    return this.view(sessionId, timeoutMs);
  }

  async notifyPayerReturned(sessionId: string): Promise<void> {
    try {
      await this.handle(sessionId).signal(payerReturnedSignal);
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      // A payer may come back after the session has ended: nothing is left to check, and the
      // session still exists. Only a session Temporal never saw is unknown.
      try {
        await this.handle(sessionId).describe();
      } catch (e) {
        if (e instanceof WorkflowNotFoundError) throw new SessionNotFoundError(sessionId);
        throw e;
      }
    }
  }

  private handle(sessionId: string) {
    return this.opts.temporal.workflow.getHandle(sessionId);
  }

  private async decide(sessionId: string, run: () => Promise<SessionView>): Promise<SessionView> {
    try {
      return await run();
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) throw new SessionNotFoundError(sessionId);
      if (err instanceof WorkflowUpdateFailedError)
        throw new SessionStateError(err.cause?.message ?? err.message);
      throw err;
    }
  }

  private async view(sessionId: string, waitMs?: number): Promise<SessionView> {
    const handle = this.handle(sessionId);
    if (waitMs && waitMs > 0 && (await handle.describe()).status.name === 'RUNNING') {
      try {
        return await handle.executeUpdate(awaitProgressUpdate, { args: [{ timeoutMs: waitMs }] });
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError) && !(err instanceof WorkflowUpdateFailedError)) throw err;
      }
    }
    return this.getSession(sessionId);
  }

  private paymentSettings(backUrl?: string, allowRecurring?: boolean): Record<string, unknown> | undefined {
    if (backUrl === undefined && allowRecurring === undefined) return undefined;
    return {
      ...(backUrl ? { back_url: backUrl } : {}),
      ...(allowRecurring !== undefined ? { allow_recurring: allowRecurring } : {}),
    };
  }

  private initiateBody(
    i: Common,
    amount: Money,
    paymentSettings?: Record<string, unknown>,
  ): Record<string, unknown> {
    return {
      sum_info: { sum: amount.amount, currency_code: amount.currency },
      ...(i.customer ? { user_info: i.customer } : {}),
      ...(i.participant ? { participant_info: i.participant } : {}),
      ...(paymentSettings ? { payment_settings: paymentSettings } : {}),
      ...(i.extraInfo !== undefined ? { extra_info: i.extraInfo } : {}),
    };
  }

  /**
   * initiate (key from the caller's reference) -> workflow with id = session id -> for card data,
   * the start call from here (key from the session and step `start`, the same key on a repeat).
   */
  private async start(
    kind: SessionKind,
    i: Common,
    amount: Money,
    start: StartSpec,
    initiateBody: Record<string, unknown>,
    o: StartOptions,
    sendCard?: (sessionId: string, key: string) => Promise<{ session_info: SessionInfo }>,
    qrRenewals?: number,
  ): Promise<SessionView> {
    const initiated = await this.opts.provider.initiate(initiateBody, {
      idempotencyKey: deriveIdempotencyKey(`ref:${i.reference}`, 'initiate'),
    });
    const session = initiated.session_info;
    const fresh = await this.startWorkflow(
      kind,
      i.reference,
      amount,
      start,
      session,
      i.settings,
      {},
      qrRenewals,
    );
    if (sendCard && fresh.phase === 'starting') {
      try {
        const res = await sendCard(session.id, deriveIdempotencyKey(session.id, 'start'));
        await this.handle(session.id).signal(providerEventSignal, {
          type: START_RESPONSE,
          session_info: scrubCardData(res.session_info),
        });
      } catch (err) {
        if (err instanceof ProviderError && !err.retryable) {
          await this.handle(session.id).signal(startFailedSignal, {
            reason: `${err.errorCode}: ${err.description}`,
          });
        } else {
          throw err;
        }
      }
    }
    return this.view(session.id, o.waitMs);
  }

  private async startWorkflow(
    kind: SessionKind,
    reference: string,
    amount: Money | undefined,
    start: StartSpec,
    session: SessionInfo,
    overrides: inputs.CardCheckoutInput['settings'],
    o: StartOptions,
    qrRenewals?: number,
  ): Promise<SessionView> {
    const input: SessionInput = {
      sessionId: session.id,
      kind,
      reference,
      start,
      settings: mergeSettings(this.settings, overrides),
      initialSnapshot: session,
      ...(amount ? { money: amount } : {}),
      ...(qrRenewals ? { qrRenewals } : {}),
    };
    try {
      await this.opts.temporal.workflow.start(WORKFLOW_OF[kind], {
        workflowId: session.id,
        taskQueue: this.opts.taskQueue,
        args: [input],
        // A repeat of the same request finds the same workflow, running or finished.
        workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        typedSearchAttributes: sessionSearchAttributes({
          kind,
          status: 'starting',
          reference,
          ...(amount ? { amount: amount.amount, currency: amount.currency } : {}),
        }),
      });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
    return this.view(session.id, o.waitMs);
  }
}
