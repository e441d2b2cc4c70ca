/**
 * One payment session as its workflow knows it: the provider's snapshot applied only forward, the phase
 * that follows it (final once final), the partner's refunds, the event log and the webhook audit trail,
 * and the two ways news arrives: signals (webhooks, the payer's return) and polls of transaction/state
 * when news is late. The process itself (start, approval, payer, finalization, result, aftercare) lives in
 * the workflow files and their steps; they read and change the session only through these methods.
 */
import * as wf from '@temporalio/workflow';
import { eventId, type SessionEventType } from '../common/events';
import { isFinalPhase, type SessionPhase } from '../common/kinds';
import { sessionSettledSignal, type AwaitChange } from '../common/messages';
import { AmountMinor, CreatedAt, NeedsAttention, PaymentStatus } from '../common/search-attributes';
import type { ProviderRefusal } from '../common/failures';
import type {
  RefundRecord,
  SessionInput,
  SessionState,
  ProviderEventDelivery,
  PayoutOrder,
} from '../common/session-input';
import {
  currentPayout,
  isFinalPayout,
  payoutsMismatch,
  payoutsPhase,
  payoutsReason,
  payoutStatus,
} from '../common/payouts';
import type { ProviderEventRecord, SessionEvent, SessionView } from '../common/views';
import type { SessionInfo, WebhookEvent } from '../provider/schemas';
import { persist, proofs, provider } from './calls';
import { parseMessage, providerEventDelivery, UNENCRYPTED } from '../common/message-schemas';
import type { ProviderEventProof } from '../activities/types';
import { LocalLane } from './local-lane';
import { SessionRecorder } from './session-recorder';
import { PayerReturnThrottle } from './payer-return';
import { phaseOfState, sessionViewOf } from '../common/session-view';
import {
  amountMismatch,
  failureReason,
  isNewer,
  moneybackOf,
  operationOf,
  phaseOf,
} from '../common/snapshot';
import { iso } from './iso';

const MAX_EVENTS = 300;
const MAX_PROVIDER_EVENTS = 200;
const MAX_RECORDED = 40;
/** Older than this, a snapshot is read again before a money-moving call is sent on its word. */
const STALE_MS = 10 * 60_000;
/** How far ahead of the workflow's clock a reported snapshot's updated_at may be (clocks differ). */
const CLOCK_SKEW_MS = 5 * 60_000;
/** Continue-as-new past this many history events unless the server suggests it earlier. */
const DEFAULT_HISTORY_LIMIT = 8_000;

/** A provider delivery as the signal handler queued it: what it claims, its proof if any, or why not. */
interface HeardDelivery {
  heard: { receivedAt: string; type: string; via: ProviderEventDelivery['via'] };
  signed?: { body: string; signature: string };
  refused?: string;
}

/** How a kind reads the provider (identity checks and FPS renewals differ from payments). */
export interface Reading {
  /** The phase a snapshot means (the session's state says what else the kind knows, e.g. renewals). */
  phase?: (s: SessionInfo | undefined, st: SessionState) => SessionPhase;
  /** The reason of an end other than success, from the provider's error code. */
  explain?: (code: string | undefined) => string | undefined;
}

export class Session {
  private readonly st: SessionState;
  private pollRequested = false;
  /** A flood of payer returns is one state check per interval (DESIGN decision 14). */
  private readonly payerReturns = new PayerReturnThrottle();
  /** Unproven deliveries (syncs, unsigned claims) ask for a state read at most this often, too. */
  private readonly looks = new PayerReturnThrottle();
  /** Runs from before DESIGN decision 16 applied signaled events as they came (replayed as they ran). */
  private readonly proofRequired: boolean;
  /** Provider deliveries heard and not yet judged (judgeInOrder), oldest first. */
  private readonly heard: HeardDelivery[] = [];
  /** A partner decision (Update) being carried out: the process waits for it, a second one is refused. */
  private deciding: string | undefined;
  private readonly historyLimit: number;
  /** Writes the session's record and its events to the store (DESIGN decision 15). */
  private readonly recorder: SessionRecorder;
  /** The recorder's writes and webhook verifications take turns (see LocalLane). */
  private readonly lane = new LocalLane();
  /** Update handlers at work (see inUpdate). */
  private updates = 0;

  private readonly readPhase: (s: SessionInfo | undefined, st: SessionState) => SessionPhase;
  private readonly explain: (code: string | undefined) => string | undefined;

  constructor(
    private readonly input: SessionInput,
    reading: Reading = {},
  ) {
    this.readPhase = reading.phase ?? ((s) => phaseOf(s));
    this.explain = reading.explain ?? ((code) => code);
    this.historyLimit = input.continueAsNewAfter ?? DEFAULT_HISTORY_LIMIT;
    this.proofRequired = wf.patched('provider-proof');
    this.st = input.carried ?? {
      sessionId: input.sessionId,
      kind: input.kind,
      reference: input.reference,
      request: input.request,
      settings: input.settings,
      // The CreatedAt search attribute it was started with, so that a search by time finds what the view says.
      createdAt: iso(wf.workflowInfo().typedSearchAttributes.get(CreatedAt)?.getTime() ?? Date.now()),
      providerPhase: 'starting',
      sent: {},
      renewals: 0,
      refunds: [],
      events: [],
      providerEvents: [],
      recorded: [],
      eventSequence: 0,
      announced: [],
      version: 0,
      runs: 0,
      ...(input.payouts ? { payouts: input.payouts } : {}),
    };
    this.recorder = new SessionRecorder(() => ({ state: this.st, view: this.view() }), this.lane);
    // Created and the starting call's snapshot come first: the kind's file registers the signal handlers
    // right after (steps/messages.ts), which delivers the signals buffered for the first activation (a
    // provider webhook sent before the workflow ran) that could otherwise announce the result first.
    if (!input.carried) {
      this.log('call', 'created', `${input.kind} ${input.reference}`);
      this.announce('session.created');
      if (input.initialSnapshot) this.apply(input.initialSnapshot, 'call', 'initiate');
    }
    if (this.proofRequired) void this.judgeInOrder();
    if (input.reopened) this.followAgain();
  }

  // ---- reading ----

  get id(): string {
    return this.st.sessionId;
  }
  get settings() {
    return this.st.settings;
  }
  get request() {
    return this.st.request;
  }
  get snapshot(): SessionInfo | undefined {
    return this.st.snapshot;
  }
  /** The phase the provider's state means (what the process acts on). */
  get providerPhase(): SessionPhase {
    return this.st.providerPhase;
  }
  /** The phase a caller sees: final once final; needs_attention while paysaga keeps trying. */
  get phase(): SessionPhase {
    return phaseOfState(this.st);
  }
  isFinal(): boolean {
    return this.st.final !== undefined;
  }
  get refunds() {
    return this.st.refunds;
  }
  get renewals(): number {
    return this.st.renewals;
  }
  get decisionInProgress(): string | undefined {
    return this.deciding;
  }
  /**
   * A look at transaction/state was asked for (a payer's return, an unproven provider event) after the
   * result (waits before it look on their own: `until`). Runs from before the proof never looked here,
   * and replay as they ran.
   */
  get lookRequested(): boolean {
    return this.proofRequired && this.pollRequested;
  }
  /** Reads the state for a look asked for (see lookRequested). */
  async look(): Promise<void> {
    this.pollRequested = false;
    await this.poll();
  }

  /** When `step` was first sent (it is resent only after a look at the state), or undefined. */
  sentAt(step: string): number | undefined {
    return this.st.sent[step];
  }

  // ---- changing ----

  log(source: SessionEvent['source'], type: string, detail?: string): void {
    this.st.events.push({ at: iso(Date.now()), source, type, ...(detail ? { detail } : {}) });
    if (this.st.events.length > MAX_EVENTS) this.st.events.splice(0, this.st.events.length - MAX_EVENTS);
    this.changed();
  }

  private changed(): void {
    this.st.version++;
  }

  /**
   * A provider event (DESIGN decision 16): only what the provider signed is applied. The payload is
   * parsed first; a signed one is verified again by this worker (a local activity) and applied if it is
   * news; anything unsigned is at most a reason to read transaction/state. Every delivery is in the
   * audit, a refused one with why. Nothing a signal carries can fail a workflow task.
   */
  receive(payload: unknown): void {
    if (!this.proofRequired) {
      this.receiveVerified(payload as Required<Pick<ProviderEventDelivery, 'event'>> & ProviderEventDelivery);
      return;
    }
    const parsed = parseMessage(providerEventDelivery, payload);
    if (!parsed.ok) {
      const heard = { receivedAt: iso(Date.now()), type: 'unknown', via: 'webhook' as const };
      this.heard.push({
        heard,
        refused: parsed.why === UNENCRYPTED ? parsed.why : `malformed: ${parsed.why}`,
      });
      return;
    }
    const d = parsed.value;
    const heard = { receivedAt: d.receivedAt, type: d.event?.type ?? 'unknown', via: d.via };
    this.heard.push(d.signed ? { heard, signed: d.signed } : { heard });
  }

  /**
   * Judges deliveries one at a time, in the order they came, from the workflow's own loop (as the
   * recorder writes): a signal handler only queues, so no handler waits on an activity, and the audit
   * lists deliveries as they arrived. A signed one is verified again by this worker (a local activity).
   */
  private async judgeInOrder(): Promise<void> {
    for (;;) {
      await wf.condition(() => this.heard.length > 0);
      try {
        await this.judge(this.heard[0]!);
      } finally {
        this.heard.shift();
      }
    }
  }

  private async judge({ heard, signed, refused }: HeardDelivery): Promise<void> {
    if (refused) {
      this.audit(heard, 'refused', refused);
      return;
    }
    if (!signed) {
      // A state sync (the reconciler read it), or a webhook that could not travel signed: look for ourselves.
      if (heard.via === 'sync') this.audit(heard, 'confirming');
      else this.audit(heard, 'refused', 'unsigned');
      if (this.looks.admit(Date.now())) this.pollRequested = true;
      return;
    }
    let proof: ProviderEventProof;
    try {
      proof = await this.lane.run(() => proofs.verifyProviderEvent(signed));
    } catch (err) {
      // The worker could not check it (no service key configured, a fault): the provider's state decides.
      const why = err instanceof wf.ActivityFailure ? (err.cause?.message ?? err.message) : String(err);
      this.audit(heard, 'confirming', `not verified: ${why}`);
      this.pollRequested = true;
      return;
    }
    if (!proof.ok) this.audit(heard, 'refused', proof.reason);
    else if (proof.event.session_info.id !== this.id)
      this.audit({ ...heard, type: proof.event.type }, 'refused', 'signed for another session');
    else this.receiveVerified({ receivedAt: heard.receivedAt, via: heard.via, signed, event: proof.event });
  }

  /** A provider event the provider signed: recorded, then applied if it is news. */
  private receiveVerified(d: ProviderEventDelivery & { event: WebhookEvent }): void {
    const applied = d.event.session_info.id === this.id && isNewer(d.event.session_info, this.st.snapshot);
    const outcome = applied
      ? 'applied'
      : this.st.snapshot && isNewer(this.st.snapshot, d.event.session_info)
        ? 'older'
        : 'duplicate';
    this.audit(
      {
        receivedAt: d.receivedAt,
        type: d.event.type,
        via: d.via,
        ...(d.event.session_info.updated_at ? { updatedAt: d.event.session_info.updated_at } : {}),
      },
      outcome,
    );
    if (d.via !== 'replay') {
      // Kept for `paysaga webhooks replay` as it came: signed, so a replay is verified again.
      const { event: _verified, ...kept } = d;
      this.st.recorded.push(this.proofRequired ? kept : d);
      if (this.st.recorded.length > MAX_RECORDED)
        this.st.recorded.splice(0, this.st.recorded.length - MAX_RECORDED);
    }
    const source = d.via === 'webhook' || d.via === 'replay' ? 'webhook' : 'poll';
    if (applied) this.apply(d.event.session_info, source, d.event.type);
    else this.log(source, d.event.type, `ignored: ${outcome}`);
  }

  /** One entry of the webhook audit trail (and of the event log when it changes nothing). */
  private audit(
    heard: Omit<ProviderEventRecord, 'outcome' | 'detail'>,
    outcome: ProviderEventRecord['outcome'],
    detail?: string,
  ): void {
    this.st.providerEvents.push({ ...heard, outcome, ...(detail ? { detail } : {}) });
    this.st.auditCount = (this.st.auditCount ?? 0) + 1;
    if (this.st.providerEvents.length > MAX_PROVIDER_EVENTS)
      this.st.providerEvents.splice(0, this.st.providerEvents.length - MAX_PROVIDER_EVENTS);
    if (outcome === 'refused' || outcome === 'confirming') {
      this.log(
        heard.via === 'sync' ? 'poll' : 'webhook',
        heard.type,
        `${outcome}${detail ? `: ${detail}` : ''}`,
      );
      if (outcome === 'refused')
        wf.log.warn('provider event refused', { sessionId: this.id, via: heard.via, reason: detail });
    }
  }

  payerReturned(): void {
    if (!this.payerReturns.admit(Date.now())) return;
    this.log('payer', 'returned');
    this.pollRequested = true;
  }

  /**
   * Applies a snapshot if it is newer than the one held; returns whether it was. The phase follows it
   * until it is final; after that, refunds and chargebacks are recorded and announced, and a provider
   * state that contradicts the final phase is reported, never written over it.
   */
  apply(snapshot: SessionInfo, source: SessionEvent['source'], type = 'snapshot'): boolean {
    if (snapshot.id !== this.id || !isNewer(snapshot, this.st.snapshot)) return false;
    this.st.snapshot = snapshot;
    this.st.snapshotAt = Date.now();
    const phase = this.phaseOf(snapshot);
    this.log(
      source,
      type,
      `${snapshot.transaction_status}/${operationOf(snapshot)?.transaction_status ?? '-'} -> ${phase}`,
    );
    const before = this.phase;
    this.st.providerPhase = phase;
    const mismatch = this.mismatchOf(snapshot);
    if (mismatch) this.noteMismatch(mismatch);
    this.announcePayouts();
    this.followPhase(snapshot, phase);
    this.announceMoneyback();
    if (this.phase !== before) this.phaseChanged();
    return true;
  }

  /**
   * A snapshot reported by someone other than this worker's own provider calls (the starter's answer to
   * its start call, which carried card data outside Temporal). It may move the session along (a 3-D
   * Secure redirect, an operation to approve: what the session does next is a provider call of its own,
   * which the provider answers truthfully); a result, money back, a time ahead of the clock (which would
   * make the provider's real states look older) or a shape the session cannot read is confirmed by
   * transaction/state first, whose answer is applied (DESIGN decision 16). Runs from before the proof
   * applied every report as it came.
   */
  applyClaim(snapshot: SessionInfo, type: string): void {
    if (!this.proofRequired || this.readable(snapshot)) {
      this.apply(snapshot, 'call', type);
      return;
    }
    this.log('call', type, 'reported: confirming with transaction/state');
    this.pollRequested = true;
  }

  /** A claimed snapshot the session may apply on its word (see applyClaim). */
  private readable(snapshot: SessionInfo): boolean {
    try {
      const updated = snapshot.updated_at ? Date.parse(snapshot.updated_at) : NaN;
      return (
        snapshot.id === this.id &&
        Number.isFinite(updated) &&
        updated <= Date.now() + CLOCK_SKEW_MS &&
        !isFinalPhase(this.phaseOf(snapshot)) &&
        moneybackOf(snapshot).length === 0 &&
        (this.mismatchOf(snapshot), true)
      );
    } catch {
      return false;
    }
  }

  /**
   * Reads the held snapshot again after the workflow's own reading of it changed (an FPS payment whose
   * expired QR will not be replaced any more: the expiry is now its end).
   */
  reread(): void {
    const snapshot = this.st.snapshot;
    const phase = this.phaseOf(snapshot);
    if (phase === this.st.providerPhase) return;
    const before = this.phase;
    this.log('timer', 'reread', `${snapshot?.transaction_status ?? '-'} -> ${phase}`);
    this.st.providerPhase = phase;
    this.followPhase(snapshot, phase);
    if (this.phase !== before) this.phaseChanged();
  }

  /** The phase a snapshot means: over every payout when the session holds several (common/payouts.ts). */
  private phaseOf(snapshot: SessionInfo | undefined): SessionPhase {
    const orders = this.st.payouts;
    const single = (s: SessionInfo | undefined) => this.readPhase(s, this.st);
    return orders ? payoutsPhase(snapshot, orders, single) : single(snapshot);
  }

  /** The amount check: of each payout against its own amount when the session holds several. */
  private mismatchOf(snapshot: SessionInfo | undefined): string | undefined {
    return this.st.payouts
      ? payoutsMismatch(snapshot, this.st.payouts)
      : amountMismatch(snapshot, this.st.request.money, this.st.finalizeAmount);
  }

  private followPhase(snapshot: SessionInfo | undefined, phase: SessionPhase): void {
    const why = () =>
      this.st.payouts ? payoutsReason(snapshot, this.st.payouts) : this.explain(failureReason(snapshot));
    if (!this.st.final && isFinalPhase(phase)) this.settle(phase, why());
    else if (this.st.final && isFinalPhase(phase) && phase !== this.st.final.phase) this.drift(phase);
  }

  /** The result is known: final from now on. `reason` says why when it is not a success. */
  settle(phase: SessionPhase, reason?: string): void {
    if (this.st.final) return;
    const why = phase === 'succeeded' ? undefined : (this.st.reason ?? reason);
    this.st.final = { phase, at: iso(Date.now()), ...(why ? { reason: why } : {}) };
    if (why) this.st.reason = why;
    // Nothing is left to wait for: what kept the session busy is over with its result.
    if (this.st.attention && !this.st.attention.reason.startsWith('amount_mismatch')) this.clearAttention();
    this.log('timer', 'final', `${phase}${why ? `: ${why}` : ''}`);
    this.phaseChanged();
    if (this.input.notify) {
      // The subscription of a charge learns the result at once (it also reads the provider itself).
      void wf
        .getExternalWorkflowHandle(this.input.notify)
        .signal(sessionSettledSignal, { sessionId: this.id, phase, ...(why ? { reason: why } : {}) })
        .catch(() => undefined);
    }
  }

  /**
   * Why the session will end other than successfully (kept once set: the first cause is the cause).
   * Returns whether this call set it, so that a refused action can take its reason back (forget).
   */
  because(reason: string): boolean {
    if (this.st.final) return false;
    // Of a session of several payouts, the cause belongs to the payout being worked on.
    const order = this.st.payouts && currentPayout(this.st.snapshot, this.st.payouts);
    if (order) {
      if (order.reason !== undefined) return false;
      order.reason = reason;
      return true;
    }
    if (this.st.reason !== undefined) return false;
    this.st.reason = reason;
    return true;
  }
  forget(reason: string): void {
    if (this.st.final) return;
    const order = this.st.payouts && currentPayout(this.st.snapshot, this.st.payouts);
    if (order?.reason === reason) delete order.reason;
    else if (this.st.reason === reason) delete this.st.reason;
  }

  /** The amount or currency the provider shows is not what was asked (see snapshot.amountMismatch). */
  amountProblem(): string | undefined {
    return this.mismatchOf(this.st.snapshot);
  }

  /** The snapshot is old enough that the provider may have moved on (a resend reads the state first). */
  stale(): boolean {
    return this.st.snapshotAt === undefined || Date.now() - this.st.snapshotAt > STALE_MS;
  }

  private noteMismatch(mismatch: string): void {
    const reason = `amount_mismatch: ${mismatch}`;
    if (this.st.attention?.reason === reason) return;
    this.because(reason);
    this.needsAttention(reason);
  }

  private drift(providerPhase: SessionPhase): void {
    const reason = `drift: the provider now shows ${providerPhase}, the session ended ${this.st.final!.phase}`;
    if (this.st.attention?.reason === reason) return;
    this.needsAttention(reason);
    this.announce('session.drift_detected');
  }

  /** Announces each payout of a session of several once it ends (the event names it: data.operation). */
  private announcePayouts(): void {
    for (const order of this.st.payouts ?? []) {
      const status = payoutStatus(order, this.st.snapshot);
      const key = `payout:${order.reference}`;
      if (!isFinalPayout(status) || this.st.announced.includes(key)) continue;
      this.st.announced.push(key);
      this.log('timer', `payout_${status}`, order.reference);
      this.announce(
        status === 'succeeded'
          ? 'session.payout_succeeded'
          : status === 'canceled'
            ? 'session.payout_canceled'
            : 'session.payout_failed',
        order.reference,
      );
    }
  }

  /** Records refunds and chargebacks the provider shows (also after the result) once each. */
  private announceMoneyback(): void {
    for (const m of moneybackOf(this.st.snapshot)) {
      const done = m.transaction_status === 'completed' || m.transaction_status === 'repaid';
      if (!done || this.st.announced.includes(m.id)) continue;
      this.st.announced.push(m.id);
      this.log(
        'webhook',
        m.chargeback ? 'chargeback' : 'refunded',
        `${m.id} ${m.sum_info?.sum ?? ''}`.trim(),
      );
      this.announce(m.chargeback ? 'session.chargeback' : 'session.refunded');
    }
  }

  private phaseChanged(): void {
    const phase = this.phase;
    wf.upsertSearchAttributes([{ key: PaymentStatus, value: phase }]);
    if (phase !== this.st.announcedPhase) {
      this.st.announcedPhase = phase;
      // A decision on one of several payouts names the payout it is about.
      const payout =
        phase === 'awaiting_approval' && this.st.payouts
          ? currentPayout(this.st.snapshot, this.st.payouts)?.reference
          : undefined;
      if (phase !== 'starting' && phase !== 'processing') this.announce(`session.${phase}`, payout);
    }
  }

  /**
   * paysaga cannot learn or act for now (the provider unreachable past every retry, a deadline that
   * could not cancel): a non-final phase (unless the result is final), a search attribute, a metric and
   * a log line, until clearAttention.
   */
  needsAttention(reason: string): void {
    if (this.st.attention?.reason === reason) return;
    const before = this.phase;
    const first = !this.st.attention;
    this.st.attention = { reason, since: iso(Date.now()) };
    this.log('timer', 'needs_attention', reason);
    wf.log.warn('session needs attention', { sessionId: this.id, reason });
    if (first) {
      wf.upsertSearchAttributes([{ key: NeedsAttention, value: true }]);
      wf.metricMeter.createCounter('paysaga_sessions_needing_attention_total').add(1);
    }
    if (this.phase !== before) this.phaseChanged();
    else if (this.st.final) this.announce('session.needs_attention');
  }

  clearAttention(): void {
    if (!this.st.attention) return;
    const before = this.phase;
    this.log('timer', 'attention_cleared', this.st.attention.reason);
    delete this.st.attention;
    wf.upsertSearchAttributes([{ key: NeedsAttention, value: false }]);
    if (this.phase !== before) this.phaseChanged();
  }

  /**
   * An event for the partner's backend (DESIGN decision 13): numbered per session, carried across runs
   * so a later run goes on counting, handed to the session's outbox without waiting. Its data is the
   * session at that moment, without the provider's raw snapshot and the event log (the session shows
   * them).
   */
  private announce(type: SessionEventType, payout?: string): void {
    const sequence = ++this.st.eventSequence;
    const { lastSnapshot: _snapshot, events: _log, ...view } = this.view();
    const operation = payout ? view.payouts?.find((p) => p.reference === payout) : undefined;
    const data = operation ? { ...view, operation: { kind: 'payout' as const, ...operation } } : view;
    this.recorder.announce({
      id: eventId(this.id, sequence),
      type,
      created: iso(Date.now()),
      session_id: this.id,
      sequence,
      data,
    });
    this.log('timer', 'event', `${type} #${sequence}`);
  }

  /** The payouts of a session of several (absent: the session's one payout). */
  get payouts(): readonly PayoutOrder[] | undefined {
    return this.st.payouts;
  }

  /**
   * Adds a payout to the session; a session of one payout takes it as its second, its own payout first.
   */
  addPayout(order: PayoutOrder): void {
    const { money } = this.st.request;
    this.st.payouts ??= [
      {
        reference: this.st.reference,
        money: money ?? { amount: 0, currency: order.money.currency },
        addedAt: this.st.createdAt,
        first: true,
      },
    ];
    this.st.payouts.push(order);
    // What the session asks for is now every payout together (the view's money, the amount searched by).
    const total = this.st.payouts.reduce((n, o) => n + o.money.amount, 0);
    this.st.request = { ...this.st.request, money: { amount: total, currency: order.money.currency } };
    wf.upsertSearchAttributes([{ key: AmountMinor, value: total }]);
    this.payoutsChanged('payout_added', `${order.reference}: ${order.money.amount} ${order.money.currency}`);
  }

  /** A payout's record changed (sent, started, refused): logged, announced if it ended, phase read again. */
  payoutsChanged(type: string, detail: string): void {
    this.log('call', type, detail);
    this.announcePayouts();
    this.reread();
  }

  setPublicToken(token: string): void {
    this.st.publicToken = token;
    this.log('call', 'public_token', 'widget token created');
  }

  noteSent(step: string): void {
    this.st.sent[step] ??= Date.now();
  }

  noteFinalize(amount: number | undefined): void {
    if (amount === undefined) {
      delete this.st.finalizeAmount;
      return;
    }
    this.st.finalizeAmount = amount;
    // A partial finalize changes what the session is worth: keep the search attribute current.
    wf.upsertSearchAttributes([{ key: AmountMinor, value: amount }]);
  }

  noteRenewal(): number {
    return ++this.st.renewals;
  }

  /** When following the finished session ends (set once, carried across runs). */
  followUntil(): number {
    this.st.followUntil ??= Date.now() + this.st.settings.followMs;
    return this.st.followUntil;
  }
  /** A later run (a refund or a late event after the workflow closed) follows for another window. */
  followAgain(): void {
    this.st.followUntil = Date.now() + this.st.settings.followMs;
  }

  /** The session deadline: from creation, so that a continued run does not extend it. */
  deadline(): number {
    return Date.parse(this.st.createdAt) + this.st.settings.deadlines.sessionMs;
  }

  addRefund(r: RefundRecord): void {
    this.st.refunds.push(r);
    this.log('partner', 'refund_requested', `${r.reference}: ${r.amount} ${r.currency}`);
  }
  updateRefund(reference: string, change: Partial<RefundRecord>): void {
    const r = this.st.refunds.find((x) => x.reference === reference);
    if (!r) return;
    Object.assign(r, change);
    this.log(
      'call',
      `refund_${r.status}`,
      `${reference}${r.refundId ? ` ${r.refundId}` : ''}${r.reason ? `: ${r.reason}` : ''}`,
    );
  }

  /** The starter's card was refused by the provider (reported by reportStart). */
  get startRefusal(): ProviderRefusal | undefined {
    return this.st.startRefusal;
  }
  refuseStart(refusal: ProviderRefusal): void {
    this.st.startRefusal = refusal;
    this.log('call', 'start_refused', `${refusal.errorCode}: ${refusal.description}`);
  }

  claimStart(forMs: number): void {
    this.st.startClaimUntil = Date.now() + forMs;
    this.log('call', 'start_claimed', 'the starter is sending card data');
  }
  get startClaimUntil(): number | undefined {
    return this.st.startClaimUntil;
  }

  beginDecision(kind: string): void {
    this.deciding = kind;
    this.log('decision', kind);
  }

  /** Runs an Update's work (its provider calls never continue the workflow as new midway). */
  async inUpdate<T>(work: () => Promise<T>): Promise<T> {
    this.updates++;
    try {
      return await work();
    } finally {
      this.updates--;
    }
  }
  endDecision(): void {
    this.deciding = undefined;
    this.changed();
  }

  // ---- talking to the provider ----

  /**
   * A provider call that must eventually be answered. Temporal retries it a few times (its policy);
   * when those run out, the session needs attention and the call is tried again on a capped backoff
   * until the provider answers. A refusal (the provider says no for good) is thrown to the caller;
   * for reads (`readOnly`) nothing is final, so they are retried too.
   */
  async call<T>(what: string, send: () => Promise<T>, readOnly = false): Promise<T> {
    const { polling } = this.st.settings;
    const answer = await persist(send, {
      pauseMs: polling.initialMs,
      maxMs: polling.maxMs,
      retryRefusals: readOnly,
      onTrouble: (message) => this.needsAttention(`${what}: ${message}`),
      // An outage of days must not outgrow the history. Not from inside an Update (continue-as-new
      // waits for handlers to finish): the process resumes from its state and resends after a look.
      between: () => (this.updates === 0 ? this.continueAsNewIfDue() : Promise.resolve()),
    });
    if (this.st.attention?.reason.startsWith(`${what}:`)) this.clearAttention();
    return answer;
  }

  /** Reads transaction/state and applies it. */
  async poll(): Promise<void> {
    const c = this.callArgs();
    this.apply(await this.call('transaction/state', () => provider.getState(c), true), 'poll', 'state');
  }

  /** The session id, sub-merchant and project every call of this session carries. */
  callArgs(): { sessionId: string; submerchantId?: string; projectId?: string } {
    const { submerchantId, projectId } = this.st.request;
    return {
      sessionId: this.id,
      ...(submerchantId ? { submerchantId } : {}),
      ...(projectId ? { projectId } : {}),
    };
  }

  // ---- waiting ----

  /**
   * Waits, forward only, until `pred` holds; false if `deadline` (epoch ms) passed first (after one last
   * look at the provider). News comes by signal; when it is late (with webhooks on, `lateAfterMs`; off,
   * at once) the state is polled on a backoff. A duplicate or older snapshot never counts as news.
   * Continues-as-new when the history grows long, carrying everything.
   */
  async until(pred: () => boolean, deadline = Infinity): Promise<boolean> {
    const { polling } = this.st.settings;
    const first = polling.webhooks ? polling.lateAfterMs : polling.initialMs;
    let wait = first;
    let interval = polling.initialMs;
    for (;;) {
      if (pred()) return true;
      const remaining = deadline - Date.now();
      if (remaining <= 0) {
        await this.poll();
        return pred();
      }
      await this.continueAsNewIfDue();
      const seen = this.st.snapshot;
      await wf.condition(
        () => this.st.snapshot !== seen || this.pollRequested || pred(),
        Math.min(wait, remaining),
      );
      if (pred()) return true;
      if (this.st.snapshot !== seen) {
        // News: the next wait is for the next event again.
        wait = first;
        interval = polling.initialMs;
        continue;
      }
      if (Date.now() >= deadline && !this.pollRequested) continue;
      this.pollRequested = false;
      await this.poll();
      if (this.st.snapshot === seen) {
        wait = interval;
        interval = Math.min(interval * polling.factor, polling.maxMs);
      }
    }
  }

  /** Waits up to `ms` for `wake` (continuing as new first when the history grows long); true if woken. */
  async rest(wake: () => boolean, ms: number): Promise<boolean> {
    await this.continueAsNewIfDue();
    return wf.condition(wake, ms);
  }

  /** Waits for a partner decision in flight (an Update carrying it out) to finish. */
  async decisionsSettled(): Promise<void> {
    await wf.condition(() => this.deciding === undefined);
  }

  private async continueAsNewIfDue(): Promise<void> {
    const info = wf.workflowInfo();
    if (!info.continueAsNewSuggested && info.historyLength < this.historyLimit) return;
    if (!(await this.settled())) {
      // A refund waits to be sent, and its Update waits for this loop: go on and send it first. Only a
      // history of twice the limit (an outage of days) continues as new anyway, once no decision is
      // being carried out: the waiting refund Updates then end with the run (their callers ask again
      // and reach the next run), and the next run sends the refund, carried as requested, under its key.
      if (info.historyLength < 2 * this.historyLimit) return;
      await wf.condition(() => this.updates === 0);
      await this.recorder.flushed();
    }
    this.log('timer', 'continue_as_new', `history ${info.historyLength} events`);
    // The same workflow type with the same input, carrying everything (search attributes are inherited).
    await wf.continueAsNew({ ...this.input, carried: this.carry(), reopened: false });
  }

  /** Long poll (awaitChange): the next change, or progress someone can act on, or the timeout. */
  async awaitChange(w: AwaitChange): Promise<SessionView> {
    const after = w.afterVersion ?? this.st.version;
    const progress = () =>
      this.isFinal() ||
      this.phase === 'needs_attention' ||
      this.waitsForSomeone() ||
      (this.st.publicToken !== undefined && !operationOf(this.st.snapshot));
    await wf.condition(
      () => (w.until === 'progress' ? progress() : this.st.version > after),
      Math.max(1, Math.min(w.timeoutMs, 60_000)),
    );
    return this.view();
  }

  /** The payer or the partner (manual policy) has to act. */
  waitsForSomeone(): boolean {
    const { approval, finalization } = this.st.settings;
    const phase = this.st.providerPhase;
    if (phase === 'awaiting_payer') return true;
    if (phase === 'awaiting_approval') return approval.mode === 'manual';
    return phase === 'awaiting_finalization' && finalization.mode === 'manual';
  }

  // ---- what callers see ----

  carry(): SessionState {
    return { ...this.st, runs: this.st.runs + 1 };
  }

  view(): SessionView {
    return sessionViewOf(this.st);
  }

  /** The webhook audit trail, and the provider events kept for replay (both bounded). */
  audited(): { records: ProviderEventRecord[]; recorded: ProviderEventDelivery[] } {
    return { records: [...this.st.providerEvents], recorded: [...this.st.recorded] };
  }

  /**
   * Lets running Updates finish, then returns what the next run (or a reader of the result) needs.
   * Kinds that take refunds end their aftercare settled, in this same activation (no Update can
   * arrive in between), so nothing is owed here.
   */
  async close(): Promise<SessionState> {
    await this.settled();
    return { ...this.st };
  }

  /**
   * No handler running and every event handed over, checked together (an Update accepted while the
   * events were being flushed would otherwise fail when the run ends right after): true. False at once
   * when the process owes work a running Update waits for (a refund asked for and not yet sent): only
   * the caller can do it, so waiting here for that handler would wait forever.
   */
  async settled(): Promise<boolean> {
    do {
      await wf.condition(() => (wf.allHandlersFinished() && this.heard.length === 0) || this.owesWork());
      if (this.owesWork()) return false;
      await this.recorder.flushed();
    } while (!wf.allHandlersFinished() || this.heard.length > 0);
    return true;
  }

  /** Work only the process itself does that a partner's Update may be waiting for (a refund to send). */
  owesWork(): boolean {
    return this.st.refunds.some((r) => r.status === 'requested');
  }
}
