/**
 * Payment sessions: start one of each kind, read it (also while it changes), and carry out the partner's
 * decisions. Decisions answer the provider's result; one still under way after `decisionWaitMs` is
 * answered as accepted (it is carried out, never dropped).
 */
import type { ProjectUse } from '../provider/config';
import {
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  WorkflowUpdateStage,
  type WorkflowHandle,
} from '@temporalio/client';
import { acceptsDecision, KINDS, type Decision } from '../common/kinds';
import { approveUpdate, cancelUpdate, finalizeUpdate, payerReturnedSignal } from '../common/messages';
import type { ProviderEventRecord, SessionView } from '../common/views';
import type { CardDetails, HashedCardDetails } from '../provider/schemas/card';
import type { ClientContext } from './context';
import { parse } from './context';
import { fromWorkflowFailure, SessionStateError } from './errors';
import * as inputs from './inputs';
import * as bodies from './provider-bodies';
import { updateOutlivedRun } from '../platform/session-runs';
import { awaitSession, readProviderEvents, readSession, type AwaitChange, type Started } from './reads';
import { searchSessions, type SessionPage, type SessionSearch } from './search';
import { replayProviderEvents, type ReplayReport } from './webhook-replay';
import { startSession, type StartOptions } from './starter';
import { explainTemporalFailure } from './workflow-health';

/** A decision carried out, or still under way after the wait (then `accepted`: it will be carried out). */
export type DecisionResult = SessionView & { readonly accepted?: true };

const DEFAULT_DECISION_WAIT_MS = 20_000;

export class Sessions {
  constructor(private readonly ctx: ClientContext) {}

  /** Card data held by the partner: sent to the provider by this process, never through Temporal. */
  async startCardCheckout(
    input: inputs.CardCheckoutInput,
    o: StartOptions = {},
  ): Promise<Started<SessionView>> {
    const i = parse(inputs.cardCheckoutInput, input);
    const card = i.card as CardDetails;
    return startSession(
      this.ctx,
      {
        ...this.common('card_checkout', i),
        money: i.amount,
        open: { by: 'initiate', body: bodies.initiateBody(i.amount, i) },
        start: { by: 'starter' },
        fingerprintOf: { ...i, card },
        card: (sessionId, key, returnUrl, signal) =>
          this.ctx.provider.startCheckout(
            bodies.cardCheckoutStart(
              sessionId,
              card,
              bodies.paymentSettings({ returnUrl: returnUrl ?? i.backUrl, allowRecurring: i.allowRecurring }),
            ),
            {
              idempotencyKey: key,
              signal,
              ...(i.submerchantId ? { submerchantId: i.submerchantId } : {}),
              ...this.ctx.projectOf('card_checkout'),
            },
          ),
      },
      o,
    );
  }

  async startPaymentForm(
    input: inputs.PaymentFormInput,
    o: StartOptions = {},
  ): Promise<Started<SessionView>> {
    const i = parse(inputs.paymentFormInput, input);
    return startSession(
      this.ctx,
      {
        ...this.common('payment_form', i),
        money: i.amount,
        // The widget starts the payment inside the provider: the only place for a back_url is initiate,
        // before the session id exists, so the payer goes back to the partner's own page.
        open: {
          by: 'initiate',
          body: {
            ...bodies.initiateBody(i.amount, i),
            ...(i.backUrl || i.allowRecurring !== undefined
              ? {
                  payment_settings: bodies.paymentSettings({
                    ...(i.backUrl ? { returnUrl: i.backUrl } : {}),
                    ...(i.allowRecurring !== undefined ? { allowRecurring: i.allowRecurring } : {}),
                  }),
                }
              : {}),
          },
        },
        start: { by: 'widget', widget: i.widget },
        fingerprintOf: i,
      },
      o,
    );
  }

  async startRecurringPayment(
    input: inputs.RecurringPaymentInput,
    o: StartOptions = {},
  ): Promise<Started<SessionView>> {
    const i = parse(inputs.recurringPaymentInput, input);
    // Merchant-initiated: one init/checkout (the spec's sequence). Client-initiated (3-D Secure) keeps
    // initiate + start: paysaga's signed back_url names the session, which exists only after initiate.
    const byMerchant = i.initiatedBy === 'merchant';
    return startSession(
      this.ctx,
      {
        ...this.common('recurring_payment', i, byMerchant ? 'recurring_payment' : 'recurring_client'),
        money: i.amount,
        ...(byMerchant
          ? {
              open: { by: 'init_checkout', body: bodies.recurringInitCheckout(i.amount, i.token, i) },
              start: { by: 'provider' },
            }
          : {
              open: { by: 'initiate', body: bodies.initiateBody(i.amount, i) },
              start: {
                by: 'workflow',
                operation: 'checkout',
                body: bodies.recurringCheckoutStart(i.token, true),
              },
            }),
        fingerprintOf: i,
      },
      o,
    );
  }

  async startFpsPayment(input: inputs.FpsPaymentInput, o: StartOptions = {}): Promise<Started<SessionView>> {
    const i = parse(inputs.fpsPaymentInput, input);
    return startSession(
      this.ctx,
      {
        ...this.common('fps_payment', i),
        money: i.amount,
        // With the FPS page, the provider starts the payment: the token's wish goes with initiate.
        open: {
          by: 'initiate',
          body: {
            ...bodies.initiateBody(i.amount, i),
            ...(i.widget && i.allowRecurring !== undefined
              ? { payment_settings: { allow_recurring: i.allowRecurring } }
              : {}),
          },
        },
        start: i.widget
          ? { by: 'widget', widget: i.widget, page: 'fps' }
          : {
              by: 'workflow',
              operation: 'checkout',
              body: bodies.fpsCheckoutStart(
                i.moneyPurpose,
                i.allowRecurring !== undefined ? { allow_recurring: i.allowRecurring } : undefined,
              ),
            },
        qrRenewals: i.qrRenewals,
        fingerprintOf: i,
      },
      o,
    );
  }

  /** Binding without a charge (spec rule 7): the sum is a placeholder the provider ignores. */
  async startFpsBinding(input: inputs.FpsBindingInput, o: StartOptions = {}): Promise<Started<SessionView>> {
    const i = parse(inputs.fpsBindingInput, input);
    const placeholder = { amount: 100, currency: i.currency.toLowerCase() };
    return startSession(
      this.ctx,
      {
        ...this.common('fps_binding', i),
        open: {
          by: 'initiate',
          body: {
            ...bodies.initiateBody(placeholder, i, {
              payment_info: { type: 'faster_payment_system_binding' },
            }),
            payment_settings: { allow_recurring: true },
          },
        },
        // start/checkout replaces initiate's payment_settings as a whole: the binding's consent goes again.
        start: {
          by: 'workflow',
          operation: 'checkout',
          body: { payment_settings: { allow_recurring: true } },
        },
        fingerprintOf: i,
      },
      o,
    );
  }

  async startPayout(input: inputs.PayoutInput, o: StartOptions = {}): Promise<Started<SessionView>> {
    const i = parse(inputs.payoutInput, input);
    const d = i.destination;
    const spec = {
      ...this.common('payout', i),
      money: i.amount,
      open: { by: 'initiate' as const, body: bodies.initiateBody(i.amount, i) },
      fingerprintOf: i,
    };
    if (d.type === 'card' || d.type === 'hashed_card') {
      const card = d.card as CardDetails | HashedCardDetails;
      return startSession(
        this.ctx,
        {
          ...spec,
          start: { by: 'starter' },
          card: (sessionId, key, _returnUrl, signal) =>
            this.ctx.provider.startTransfer(
              bodies.cardPayoutStart(sessionId, card, d.type === 'hashed_card'),
              {
                idempotencyKey: key,
                signal,
                ...(i.submerchantId ? { submerchantId: i.submerchantId } : {}),
                ...this.ctx.projectOf('payout'),
              },
            ),
        },
        o,
      );
    }
    // A payout by token is one init/transfer (the session and its payout at once, keyed by the reference);
    // to an FPS account it stays initiate + start/transfer, the spec's payout sequence.
    if (d.type === 'tokenized_card' || d.type === 'recurring_token')
      return startSession(
        this.ctx,
        {
          ...spec,
          open: { by: 'init_transfer', body: bodies.initTransferBody(i.amount, d, i) },
          start: { by: 'provider' },
        },
        o,
      );
    return startSession(
      this.ctx,
      { ...spec, start: { by: 'workflow', operation: 'transfer', body: bodies.payoutStart(d) } },
      o,
    );
  }

  private common(
    kind: Parameters<typeof startSession>[1]['kind'],
    i: {
      reference: string;
      settings?: Parameters<typeof startSession>[1]['settings'];
      submerchantId?: string;
      backUrl?: string;
    },
    use: ProjectUse = kind as ProjectUse,
  ) {
    return {
      kind,
      reference: i.reference,
      ...this.ctx.projectOf(use),
      ...(i.settings ? { settings: i.settings } : {}),
      ...(i.submerchantId ? { submerchantId: i.submerchantId } : {}),
      ...(i.backUrl ? { backUrl: i.backUrl } : {}),
    };
  }

  /** Sessions by reference, phase, kind and creation time, a page at a time (client/search.ts). */
  list(search: SessionSearch = {}): Promise<SessionPage> {
    return searchSessions(this.ctx.store, search);
  }

  /** The session as its latest workflow run knows it (running or closed). */
  get(sessionId: string): Promise<SessionView> {
    return readSession(this.ctx, sessionId);
  }

  /** Long poll: the next change after `afterVersion` (or progress someone can act on), at most `timeoutMs`. */
  waitForChange(sessionId: string, wait: AwaitChange): Promise<SessionView> {
    return awaitSession(this.ctx, sessionId, wait);
  }

  /** The webhook audit trail: every provider event the session received, as the store keeps it. */
  providerEvents(sessionId: string): Promise<ProviderEventRecord[]> {
    return readProviderEvents(this.ctx, sessionId);
  }

  /** Re-applies the session's recorded provider events through the webhook routing (client/webhook-replay.ts). */
  replayProviderEvents(sessionId: string): Promise<ReplayReport> {
    return replayProviderEvents(this.ctx, sessionId);
  }

  /** `payout`: the payout this approval is for (a session of several): refused unless it is the one waiting. */
  approve(sessionId: string, o: { waitMs?: number; payout?: string } = {}): Promise<DecisionResult> {
    return this.decide(sessionId, 'approve', o, (h) =>
      h.startUpdate(approveUpdate, {
        args: [o.payout !== undefined ? { payout: o.payout } : {}],
        waitForStage: WorkflowUpdateStage.ACCEPTED,
      }),
    );
  }

  cancel(
    sessionId: string,
    reason?: string,
    o: { waitMs?: number; payout?: string } = {},
  ): Promise<DecisionResult> {
    return this.decide(sessionId, 'cancel', o, (h) =>
      h.startUpdate(cancelUpdate, {
        args: [{ ...(reason ? { reason } : {}), ...(o.payout !== undefined ? { payout: o.payout } : {}) }],
        waitForStage: WorkflowUpdateStage.ACCEPTED,
      }),
    );
  }

  finalize(sessionId: string, amount?: number, o: { waitMs?: number } = {}): Promise<DecisionResult> {
    return this.decide(sessionId, 'finalize', o, (h) =>
      h.startUpdate(finalizeUpdate, {
        args: [amount !== undefined ? { amount } : {}],
        waitForStage: WorkflowUpdateStage.ACCEPTED,
      }),
    );
  }

  /** The payer came back to back_url: the session checks the provider's state now (throttled there). */
  async notifyPayerReturned(sessionId: string): Promise<void> {
    try {
      await this.handle(sessionId).signal(payerReturnedSignal);
    } catch (err) {
      throw (
        fromWorkflowFailure(err, sessionId) ??
        (await explainTemporalFailure(this.ctx.temporal, sessionId, err))
      );
    }
  }

  private handle(sessionId: string): WorkflowHandle {
    return this.ctx.temporal.workflow.getHandle(sessionId);
  }

  /**
   * Validators refuse at once (409 or 400 by the failure's type); an accepted decision answers the
   * provider's result, or `accepted` when it is still under way after the wait.
   */
  private async decide(
    sessionId: string,
    decision: Decision,
    o: { waitMs?: number },
    start: (h: WorkflowHandle) => Promise<{ result(): Promise<SessionView> }>,
    retried = false,
  ): Promise<DecisionResult> {
    try {
      const update = await start(this.handle(sessionId));
      const waitMs = o.waitMs ?? DEFAULT_DECISION_WAIT_MS;
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<undefined>(
        (resolve) => (timer = setTimeout(() => resolve(undefined), waitMs)),
      );
      const result = await Promise.race([update.result(), late]).finally(() => clearTimeout(timer));
      if (result) return result;
      const view = await this.get(sessionId);
      return Object.defineProperty(view, 'accepted', { value: true, enumerable: false }) as DecisionResult;
    } catch (err) {
      // The run continued as new (or closed) just after accepting it: the next run decides again.
      if (updateOutlivedRun(err) && !retried) return this.decide(sessionId, decision, o, start, true);
      // The workflow has closed: the session exists and has ended, nothing is left to decide.
      if (err instanceof WorkflowNotFoundError) {
        const view = await this.get(sessionId);
        throw new SessionStateError(
          `the session has ended (${view.phase}); there is nothing to decide`,
          'session_final',
        );
      }
      const mapped = fromWorkflowFailure(err, sessionId);
      if (mapped) throw mapped;
      const failing = await explainTemporalFailure(this.ctx.temporal, sessionId, err);
      if (failing !== err) throw failing;
      // An Update the workflow has no handler for fails untyped: the session's kind takes no such decision.
      if (err instanceof WorkflowUpdateFailedError) {
        const { kind } = await this.get(sessionId);
        if (!acceptsDecision(kind, decision))
          throw new SessionStateError(
            `a ${kind} session takes no ${decision} (it takes: ${KINDS[kind].decisions.join(', ') || 'none'})`,
            'not_accepted',
          );
      }
      throw err;
    }
  }
}
