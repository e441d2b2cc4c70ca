/**
 * The session's rules, without Temporal: what a provider snapshot means for the session (its phase,
 * final once final; the result and why; drift after the result; an amount that is not what was asked;
 * payouts, refunds and chargebacks, each announced once). The state it is given is its draft: the
 * reducer changes it and emits effects in the order they happen (journal.ts `Effect`); the workflow
 * performs each at once (announcer.ts). Unit tests give it a clock and collect the effects
 * (test/unit/workflows/session-reducer.test.ts).
 *
 *   const reducer = new SessionReducer(state, { now: () => clock, emit: (e) => effects.push(e) });
 *   reducer.apply(snapshot, 'poll', 'state');  // true: it was news
 */
import { isFinalPhase, type SessionPhase } from '../../common/kinds';
import {
  currentPayout,
  isFinalPayout,
  payoutsMismatch,
  payoutsPhase,
  payoutsReason,
  payoutStatus,
} from '../../common/payouts';
import { reason, reasonText, sameReason, type EndReason } from '../../common/reasons';
import type { PayoutOrder, SessionState } from '../../common/session-input';
import {
  amountMismatch,
  contradictsResult,
  failureReason,
  isNewer,
  moneybackOf,
  operationOf,
  phaseOf,
} from '../../common/snapshot';
import type { SessionEvent } from '../../common/views';
import type { SessionInfo } from '../../provider/schemas';
import { iso } from '../iso';
import { SessionJournal, type JournalDeps } from './journal';

export type { Effect } from './journal';

/** How a kind reads the provider (identity checks and FPS renewals differ from payments). */
export interface Reading {
  /** The phase a snapshot means (the session's state says what else the kind knows, e.g. renewals). */
  phase?: (snapshot: SessionInfo | undefined, state: SessionState) => SessionPhase;
  /** The reason of an end other than success, from the provider's error code. */
  explain?: (code: string | undefined) => EndReason | undefined;
}

export class SessionReducer {
  /** The event log, attention, search attributes and outbound events (journal.ts). */
  readonly journal: SessionJournal;
  private readonly readPhase: NonNullable<Reading['phase']>;
  private readonly explain: NonNullable<Reading['explain']>;

  constructor(
    private readonly state: SessionState,
    private readonly deps: JournalDeps & { reading?: Reading },
  ) {
    this.journal = new SessionJournal(state, deps);
    this.readPhase = deps.reading?.phase ?? ((s) => phaseOf(s));
    this.explain =
      deps.reading?.explain ??
      ((code) => (code ? reason('provider_error', undefined, { providerCode: code }) : undefined));
  }

  /**
   * Applies a snapshot if it is newer than the one held; returns whether it was. The phase follows it
   * until it is final; after that, refunds and chargebacks are recorded and announced, and a provider
   * state that contradicts the final phase is reported, never written over it.
   */
  apply(snapshot: SessionInfo, source: SessionEvent['source'], type = 'snapshot'): boolean {
    if (snapshot.id !== this.state.sessionId || !isNewer(snapshot, this.state.snapshot)) return false;
    this.state.snapshot = snapshot;
    this.state.snapshotAt = this.deps.now();
    const phase = this.phaseOf(snapshot);
    const status = `${snapshot.transaction_status}/${operationOf(snapshot)?.transaction_status ?? '-'}`;
    this.journal.log(source, type, `${status} -> ${phase}`);
    const before = this.journal.phase;
    this.state.providerPhase = phase;
    const mismatch = this.mismatchOf(snapshot);
    if (mismatch) this.noteMismatch(mismatch);
    this.announcePayouts();
    this.followPhase(snapshot, phase);
    this.announceMoneyback();
    if (this.journal.phase !== before) this.journal.phaseChanged();
    return true;
  }

  /**
   * Reads the held snapshot again after the session's own reading of it changed (an FPS payment whose
   * expired QR will not be replaced any more; a payout added or sent).
   */
  reread(): void {
    const snapshot = this.state.snapshot;
    const phase = this.phaseOf(snapshot);
    if (phase === this.state.providerPhase) return;
    const before = this.journal.phase;
    this.journal.log('timer', 'reread', `${snapshot?.transaction_status ?? '-'} -> ${phase}`);
    this.state.providerPhase = phase;
    this.followPhase(snapshot, phase);
    if (this.journal.phase !== before) this.journal.phaseChanged();
  }

  /** The phase a snapshot means: over every payout when the session holds several (common/payouts.ts). */
  phaseOf(snapshot: SessionInfo | undefined): SessionPhase {
    const orders = this.state.payouts;
    const single = (info: SessionInfo | undefined) => this.readPhase(info, this.state);
    return orders ? payoutsPhase(snapshot, orders, single) : single(snapshot);
  }

  /** The amount check: of each payout against its own amount when the session holds several. */
  mismatchOf(snapshot: SessionInfo | undefined): string | undefined {
    return this.state.payouts
      ? payoutsMismatch(snapshot, this.state.payouts)
      : amountMismatch(snapshot, this.state.request.money, this.state.finalizeAmount);
  }

  /** The amount or currency the provider shows is not what was asked (see snapshot.amountMismatch). */
  amountProblem(): string | undefined {
    return this.mismatchOf(this.state.snapshot);
  }

  /** The session deadline: from creation, so that a continued run does not extend it. */
  deadline(): number {
    return Date.parse(this.state.createdAt) + this.state.settings.deadlines.sessionMs;
  }

  /** The result is known: final from now on. `reason` says why when it is not a success. */
  settle(phase: SessionPhase, cause?: EndReason): void {
    if (this.state.final) return;
    const why = phase === 'succeeded' ? undefined : (this.state.reason ?? cause);
    this.state.final = { phase, at: iso(this.deps.now()), ...(why ? { reason: why } : {}) };
    if (why) this.state.reason = why;
    // Nothing is left to wait for: what kept the session busy is over with its result.
    if (this.state.attention && !this.journal.attentionFor('amount_mismatch')) this.journal.clearAttention();
    this.journal.log('timer', 'final', `${phase}${why ? `: ${reasonText(why)}` : ''}`);
    this.journal.phaseChanged();
    this.deps.emit({ kind: 'settled', phase, ...(why ? { reason: why } : {}) });
  }

  /**
   * Why the session will end other than successfully (kept once set: the first cause is the cause).
   * Returns whether this call set it, so that a refused action can take its reason back (withdrawCause).
   */
  noteCause(cause: EndReason): boolean {
    if (this.state.final) return false;
    // Of a session of several payouts, the cause belongs to the payout being worked on.
    const order = this.workedOn();
    if (order) {
      if (order.reason !== undefined) return false;
      order.reason = cause;
      return true;
    }
    if (this.state.reason !== undefined) return false;
    this.state.reason = cause;
    return true;
  }

  /** Takes back a reason `noteCause` set (the action it was for did not happen). */
  withdrawCause(cause: EndReason): void {
    if (this.state.final) return;
    const order = this.workedOn();
    if (sameReason(order?.reason, cause)) delete order!.reason;
    else if (sameReason(this.state.reason, cause)) delete this.state.reason;
  }

  /** A payout's record changed (added, sent, started, refused): logged, announced if it ended, read again. */
  payoutsChanged(type: string, detail: string): void {
    this.journal.log('call', type, detail);
    this.announcePayouts();
    this.reread();
  }

  private workedOn(): PayoutOrder | undefined {
    return this.state.payouts && currentPayout(this.state.snapshot, this.state.payouts);
  }

  private followPhase(snapshot: SessionInfo | undefined, phase: SessionPhase): void {
    const why = () =>
      this.state.payouts
        ? payoutsReason(snapshot, this.state.payouts)
        : this.explain(failureReason(snapshot));
    if (!this.state.final && isFinalPhase(phase)) this.settle(phase, why());
    else if (this.state.final && contradictsResult(this.state.final.phase, phase)) this.drift(phase);
  }

  private noteMismatch(mismatch: string): void {
    const why = reason('amount_mismatch', mismatch);
    if (this.journal.attentionIs(why)) return;
    this.noteCause(why);
    this.journal.needsAttention(why);
  }

  private drift(providerPhase: SessionPhase): void {
    const why = reason(
      'drift',
      `the provider now shows ${providerPhase}, the session ended ${this.state.final!.phase}`,
    );
    if (this.journal.attentionIs(why)) return;
    this.journal.needsAttention(why);
    this.journal.announce('session.drift_detected');
  }

  /** Announces each payout of a session of several once it ends (the event names it: data.operation). */
  private announcePayouts(): void {
    for (const order of this.state.payouts ?? []) {
      const status = payoutStatus(order, this.state.snapshot);
      const key = `payout:${order.reference}`;
      if (!isFinalPayout(status) || this.state.announced.includes(key)) continue;
      this.state.announced.push(key);
      this.journal.log('timer', `payout_${status}`, order.reference);
      this.journal.announce(
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
    for (const m of moneybackOf(this.state.snapshot)) {
      const done = m.transaction_status === 'completed' || m.transaction_status === 'repaid';
      if (!done || this.state.announced.includes(m.id)) continue;
      this.state.announced.push(m.id);
      const kind = m.chargeback ? 'chargeback' : 'refunded';
      this.journal.log('webhook', kind, `${m.id} ${m.sum_info?.sum ?? ''}`.trim());
      this.journal.announce(m.chargeback ? 'session.chargeback' : 'session.refunded');
    }
  }
}
