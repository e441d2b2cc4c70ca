/**
 * The machinery every session workflow shares: the provider snapshot applied only forward,
 * webhook signals, polling on a backoff when events are late (always when webhooks are off),
 * partner decisions through validated Updates, the query and the search attributes.
 */
import type { UpdateDefinition } from '@temporalio/common';
import * as wf from '@temporalio/workflow';
import type { SessionActivities } from '../activities/types';
import type { Payment, SessionInfo, WebhookEvent } from '../provider/schemas';
import { PaymentStatus } from '../common/search-attributes';
import {
  approveUpdate,
  awaitProgressUpdate,
  cancelUpdate,
  finalizeUpdate,
  payerReturnedSignal,
  providerEventSignal,
  sessionQuery,
  START_RESPONSE,
  startFailedSignal,
} from './definitions';
import { PayerReturnThrottle } from './payer-return';
import { amountMismatch, isNewer, latestPayment, operationOf, operationsOf, phaseOf } from './snapshot';
import {
  FINAL_PHASES,
  type Money,
  type SessionEvent,
  type SessionKind,
  type SessionPhase,
  type SessionSettings,
  type SessionView,
} from './types';

/**
 * Retried with the same idempotency key (activities/ reconcile an unknown outcome before resending);
 * errors retrying cannot fix come back as non-retryable failures.
 */
export const provider = wf.proxyActivities<SessionActivities>({
  startToCloseTimeout: '45s',
  retry: { initialInterval: '500ms', backoffCoefficient: 2, maximumInterval: '20s', maximumAttempts: 10 },
});

const MAX_EVENTS = 200;

export interface SessionRunOptions {
  sessionId: string;
  kind: SessionKind;
  reference: string;
  money?: Money;
  settings: SessionSettings;
  /** Phase for kinds whose progress is not the latest payment/payout (refunds). */
  phaseFn?: (s: SessionInfo | undefined) => SessionPhase;
}

type PendingDecision =
  { kind: 'approve' } | { kind: 'cancel'; reason?: string } | { kind: 'finalize'; amount?: number };

export class SessionRun {
  snapshot: SessionInfo | undefined;
  phase: SessionPhase = 'starting';
  reason: string | undefined;
  publicToken: string | undefined;
  readonly events: SessionEvent[] = [];
  /** Amounts the saga itself asked for (partial finalize), accepted by the amount check. */
  readonly askedAmounts: number[] = [];
  /** Steps already sent: a decision is made once per operation. */
  readonly done = new Set<string>();
  pendingDecision: PendingDecision | undefined;
  private version = 0;
  private pollRequested = false;
  private readonly payerReturns = new PayerReturnThrottle();
  private ended = false;
  private readonly phaseFn: (s: SessionInfo | undefined) => SessionPhase;

  constructor(readonly opts: SessionRunOptions) {
    this.phaseFn = opts.phaseFn ?? phaseOf;
    wf.setHandler(providerEventSignal, (event: WebhookEvent) => this.onEvent(event));
    wf.setHandler(startFailedSignal, ({ reason }) => {
      if (!operationOf(this.snapshot)) this.end('failed', `start_failed: ${reason}`);
    });
    wf.setHandler(payerReturnedSignal, () => {
      if (!this.payerReturns.admit(Date.now())) return; // at most one state check per interval
      this.log('payer', 'returned');
      this.pollRequested = true;
    });
    wf.setHandler(sessionQuery, () => this.view());
    wf.setHandler(awaitProgressUpdate, async ({ timeoutMs }) => {
      await wf.condition(
        // The public token is news only until the payer has used it; then the payment is.
        () =>
          this.isFinal() ||
          this.needsSomeone() ||
          (this.publicToken !== undefined && !operationOf(this.snapshot)),
        timeoutMs,
      );
      return this.view();
    });
    this.registerDecision(approveUpdate, () => ({ kind: 'approve' }), ['awaiting_approval']);
    this.registerDecision(cancelUpdate, (arg) => ({ kind: 'cancel', reason: arg?.reason }), [
      'awaiting_approval',
      'awaiting_finalization',
    ]);
    this.registerDecision(
      finalizeUpdate,
      (arg) => ({ kind: 'finalize', amount: arg?.amount }),
      ['awaiting_finalization'],
      (arg) => {
        const held = operationOf(this.snapshot)?.sum_info?.sum;
        const amount = arg?.amount;
        if (amount === undefined) return;
        if (!Number.isInteger(amount) || amount <= 0)
          throw new Error('amount.positive: finalize amount must be a positive integer (minor units)');
        if (held !== undefined && amount > held)
          throw new Error(`amount.max: finalize amount ${amount} is above the held amount ${held}`);
      },
    );
  }

  private registerDecision<A extends unknown[]>(
    def: UpdateDefinition<SessionView, A>,
    make: (...args: A) => PendingDecision,
    phases: SessionPhase[],
    check?: (...args: A) => void,
  ): void {
    wf.setHandler(
      def,
      async (...args: A) => {
        this.pendingDecision = make(...args);
        this.log('decision', this.pendingDecision.kind);
        await wf.condition(() => this.pendingDecision === undefined || this.isFinal());
        return this.view();
      },
      {
        validator: (...args: A) => {
          if (this.pendingDecision)
            throw new Error(
              `state.busy: a ${this.pendingDecision.kind} decision is already being carried out`,
            );
          if (!phases.includes(this.phase))
            throw new Error(`state.invalid: ${def.name} is not possible while the session is ${this.phase}`);
          check?.(...args);
        },
      },
    );
  }

  /** The payer or the partner (manual policy) has to act: a caller waiting for news can stop. */
  needsSomeone(): boolean {
    const { approval, finalization } = this.opts.settings;
    if (this.phase === 'awaiting_payer') return true;
    if (this.phase === 'awaiting_approval') return approval.mode === 'manual';
    return this.phase === 'awaiting_finalization' && finalization.mode === 'manual';
  }

  isFinal(): boolean {
    return this.ended || FINAL_PHASES.includes(this.phase);
  }

  log(source: SessionEvent['source'], type: string, detail?: string): void {
    this.events.push({ at: new Date(Date.now()).toISOString(), source, type, ...(detail ? { detail } : {}) });
    if (this.events.length > MAX_EVENTS) this.events.splice(0, this.events.length - MAX_EVENTS);
  }

  private onEvent(event: WebhookEvent): void {
    // The starter's own answer to the card call it made arrives by the same signal as webhooks.
    const source = event.type === START_RESPONSE ? 'call' : 'webhook';
    const applied = this.apply(event.session_info, source, event.type);
    if (!applied) this.log(source, event.type, 'ignored: duplicate or older than what is known');
  }

  /** Applies a snapshot if it is newer than the one held; returns whether it was. */
  apply(snapshot: SessionInfo, source: SessionEvent['source'], type = 'snapshot'): boolean {
    if (snapshot.id !== this.opts.sessionId || !isNewer(snapshot, this.snapshot)) return false;
    this.snapshot = snapshot;
    this.version++;
    const phase = this.phaseFn(snapshot);
    this.log(
      source,
      type,
      `${snapshot.transaction_status}/${operationOf(snapshot)?.transaction_status ?? '-'} -> ${phase}`,
    );
    if (!this.ended) this.setPhase(phase);
    return true;
  }

  setPhase(phase: SessionPhase, reason?: string): void {
    if (reason) this.reason = reason;
    if (phase === this.phase) return;
    this.phase = phase;
    wf.upsertSearchAttributes([{ key: PaymentStatus, value: phase }]);
  }

  /** Ends the saga here whatever the provider says next (amount mismatch, deadlines). */
  end(phase: SessionPhase, reason: string): void {
    this.setPhase(phase, reason);
    this.ended = true;
    this.log('timer', 'ended', reason);
  }

  amountProblem(): string | undefined {
    return amountMismatch(this.snapshot, this.opts.money, this.askedAmounts);
  }

  async poll(): Promise<void> {
    this.apply(await provider.getState(this.opts.sessionId), 'poll', 'state');
  }

  /**
   * Waits until a newer snapshot arrives (webhook, payer return, decision) or `deadline` passes.
   * With webhooks on, polling starts once the event is `lateAfterMs` late; with them off, at once.
   */
  async waitForProgress(deadline: number): Promise<boolean> {
    const { polling } = this.opts.settings;
    const seen = this.version;
    // With webhooks on, the first wait is for the event itself; polling starts once it is late.
    let wait = polling.webhooks ? polling.lateAfterMs : polling.initialMs;
    let interval = polling.initialMs;
    for (;;) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) return false;
      await wf.condition(
        () => this.version !== seen || this.pollRequested || this.pendingDecision !== undefined,
        Math.min(wait, remaining),
      );
      if (this.version !== seen || this.pendingDecision !== undefined) return true;
      this.pollRequested = false;
      await this.poll();
      if (this.version !== seen) return true;
      wait = interval;
      interval = Math.min(interval * polling.factor, polling.maxMs);
    }
  }

  view(): SessionView {
    const op = operationOf(this.snapshot);
    const payment = latestPayment(this.snapshot);
    const userAction = this.phase === 'awaiting_payer' ? (op as Payment | undefined)?.user_action : undefined;
    const recurringToken = payment?.recurring_token_info?.token;
    return {
      sessionId: this.opts.sessionId,
      kind: this.opts.kind,
      reference: this.opts.reference,
      phase: this.phase,
      ...(this.snapshot
        ? { providerStatus: this.snapshot.transaction_status, lastSnapshot: this.snapshot }
        : {}),
      ...(this.opts.money ? { money: this.opts.money } : {}),
      operations: operationsOf(this.snapshot),
      ...(userAction ? { userAction } : {}),
      ...(this.publicToken ? { publicToken: this.publicToken } : {}),
      ...(recurringToken ? { recurringToken } : {}),
      ...(this.reason ? { reason: this.reason } : {}),
      events: [...this.events],
    };
  }
}
