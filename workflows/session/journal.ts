/**
 * What a session tells about itself, without Temporal: its event log, the attention it needs, its phase
 * as search attributes and its outbound events (docs/decisions/013-the-backend-is-told.md), each numbered and
 * carrying the session as it is at that moment. Changes go to the state it is given; what else must
 * happen is emitted as an effect (`Effect`), in order.
 */
import type { SearchAttributeUpdatePair } from '@temporalio/common';
import { nextEvent, type PaysagaEvent, type SessionEventType } from '../../common/events';
import type { SessionPhase } from '../../common/kinds';
import { currentPayout } from '../../common/payouts';
import { reasonText, type AttentionReason, type EndReason } from '../../common/reasons';
import { AmountMinor, NeedsAttention, PaymentStatus } from '../../common/search-attributes';
import type { SessionState } from '../../common/session-input';
import { phaseOfState, sessionViewOf } from '../../common/session-view';
import type { SessionEvent } from '../../common/views';
import * as attention from '../attention';
import { iso } from '../iso';

const MAX_EVENTS = 300;

/** What a change asks of the world besides the state, in the order it happened. */
export type Effect =
  | { kind: 'search'; attributes: SearchAttributeUpdatePair[] }
  | { kind: 'event'; event: PaysagaEvent }
  | { kind: 'warn'; message: string; fields: Record<string, unknown> }
  /** The session needs attention for the first time (a metric counts it). */
  | { kind: 'attention' }
  /** The result is known (the charge's subscription, if any, is told). */
  | { kind: 'settled'; phase: SessionPhase; reason?: EndReason };

export interface JournalDeps {
  now(): number;
  emit(effect: Effect): void;
}

export class SessionJournal {
  constructor(
    private readonly state: SessionState,
    private readonly deps: JournalDeps,
  ) {}

  /** The phase a caller sees: final once final; needs_attention while paysaga keeps trying. */
  get phase(): SessionPhase {
    return phaseOfState(this.state);
  }

  /** One line of the session's event log (bounded); every change of the state counts as a version. */
  log(source: SessionEvent['source'], type: string, detail?: string): void {
    this.state.events.push({ at: iso(this.deps.now()), source, type, ...(detail ? { detail } : {}) });
    if (this.state.events.length > MAX_EVENTS)
      this.state.events.splice(0, this.state.events.length - MAX_EVENTS);
    this.touch();
  }

  /** The state changed without a line in the log (a long poll's readers see a new version). */
  touch(): void {
    this.state.version++;
  }

  /**
   * paysaga cannot learn or act for now (the provider unreachable past every retry, a deadline that
   * could not cancel): a non-final phase (unless the result is final), a search attribute, a metric and
   * a log line, until clearAttention.
   */
  needsAttention(reason: AttentionReason): void {
    const before = this.phase;
    const raised = attention.raise(this.state, reason, this.deps.now());
    if (!raised) return;
    this.log('timer', 'needs_attention', reasonText(reason));
    this.deps.emit({
      kind: 'warn',
      message: 'session needs attention',
      fields: { sessionId: this.state.sessionId, reason },
    });
    if (raised === 'first') {
      this.deps.emit({ kind: 'search', attributes: [{ key: NeedsAttention, value: true }] });
      this.deps.emit({ kind: 'attention' });
    }
    if (this.phase !== before) this.phaseChanged();
    else if (this.state.final) this.announce('session.needs_attention');
  }

  /** Whether the session needs attention for this very reason (every field the same). */
  attentionIs(reason: AttentionReason): boolean {
    return attention.is(this.state, reason);
  }

  /** Whether the session needs attention for this code (about this subject, when given). */
  attentionFor(code: AttentionReason['code'], subject?: string): boolean {
    return attention.isFor(this.state, code, subject);
  }

  clearAttention(): void {
    const before = this.phase;
    const cleared = attention.clear(this.state);
    if (!cleared) return;
    this.log('timer', 'attention_cleared', reasonText(cleared));
    this.deps.emit({ kind: 'search', attributes: [{ key: NeedsAttention, value: false }] });
    if (this.phase !== before) this.phaseChanged();
  }

  /** The amount the session is worth changed (a partial finalize, payouts added): searched by it. */
  worth(amount: number): void {
    this.deps.emit({ kind: 'search', attributes: [{ key: AmountMinor, value: amount }] });
  }

  /** The phase may have changed: the search attribute follows, and each new phase is announced once. */
  phaseChanged(): void {
    const phase = this.phase;
    this.deps.emit({ kind: 'search', attributes: [{ key: PaymentStatus, value: phase }] });
    if (phase === this.state.announcedPhase) return;
    this.state.announcedPhase = phase;
    // A decision on one of several payouts names the payout it is about.
    const payout =
      phase === 'awaiting_approval' && this.state.payouts
        ? currentPayout(this.state.snapshot, this.state.payouts)?.reference
        : undefined;
    if (phase !== 'starting' && phase !== 'processing') this.announce(`session.${phase}`, payout);
  }

  /**
   * An event for the partner's backend: numbered per session, carried across runs so a later run goes
   * on counting. Its data is the session at this moment, without the provider's raw snapshot and the
   * event log (the session shows them); a payout's event names it (`data.operation`).
   */
  announce(type: SessionEventType, payout?: string): void {
    const event = nextEvent(
      this.state,
      { session_id: this.state.sessionId },
      type,
      iso(this.deps.now()),
      () => {
        const { lastSnapshot: _snapshot, events: _log, ...view } = sessionViewOf(this.state);
        const operation = payout ? view.payouts?.find((p) => p.reference === payout) : undefined;
        return operation ? { ...view, operation: { kind: 'payout' as const, ...operation } } : view;
      },
    );
    this.deps.emit({ kind: 'event', event });
    this.log('timer', 'event', `${type} #${event.sequence}`);
  }
}
