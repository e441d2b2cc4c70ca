/**
 * One payment session as its workflow knows it. The process itself (start, approval, payer, finalization,
 * result, aftercare) lives in the workflow files and their steps; they reach the session through its
 * parts (workflows/session/), each named for what it does:
 *   state      the session's data, carried from run to run (the steps keep their own part of it: the
 *              start, refunds, renewals, payouts);
 *   rules      reducer.ts: a provider snapshot applied only forward, the phase (final once final), the
 *              result and why, drift, the amount check; payouts, refunds and chargebacks announced once;
 *   record     record.ts: the event log, attention, search attributes and outbound events;
 *   inbox      inbox.ts: provider news by signal, proven before believed, and the webhook audit trail;
 *   runtime    runtime.ts: provider calls never given up, waits that poll when news is late,
 *              continue-as-new by one rule;
 *   decisions  decisions.ts: the partner's decisions, one at a time.
 * What the rules ask of the world (search attributes, events, the subscription told) is carried out by
 * announcer.ts as it happens.
 */
import * as wf from '@temporalio/workflow';
import type { SessionPhase } from '../common/kinds';
import type { AwaitChange } from '../common/messages';
import { upgradeSessionReasons } from '../common/legacy-reasons';
import { CreatedAt } from '../common/search-attributes';
import { newSessionState, type SessionInput, type SessionState } from '../common/session-input';
import { sessionViewOf } from '../common/session-view';
import { operationOf } from '../common/snapshot';
import type { SessionView } from '../common/views';
import { iso } from './iso';
import { LocalLane } from './local-lane';
import { HELD_RECORD_PATCH, SessionRecorder, WRITE_AFTER_VERDICT_PATCH } from './session-recorder';
import { SessionAnnouncer } from './session/announcer';
import { Decisions } from './session/decisions';
import { HELD_KEYS_PATCH, ProviderInbox } from './session/inbox';
import type { SessionRecord } from './session/record';
import { SessionReducer, type Reading } from './session/reducer';
import { SessionRuntime } from './session/runtime';
import { Hold, HOLD_MS } from './session/hold';
import { HELD_STATUS_PATCH, LEAN_HISTORY_PATCH, Visibility } from './session/visibility';
import { HeldKeys } from '../common/webhook-proof';
import { ownTimers, SHARED_TIMER_PATCH, SharedTimer, type Waits } from './session/timer';

export type { Reading } from './session/reducer';

/** The CreatedAt search attribute it was started with, so that a search by time finds what the view says. */
function createdAt(): number {
  return wf.workflowInfo().typedSearchAttributes.get(CreatedAt)?.getTime() ?? Date.now();
}

export class Session {
  readonly state: SessionState;
  readonly rules: SessionReducer;
  readonly record: SessionRecord;
  readonly inbox: ProviderInbox;
  readonly runtime: SessionRuntime;
  readonly decisions: Decisions;
  readonly visibility: Visibility;
  /** How the session's waits with a timeout are kept: one timer for all of them (session/timer.ts). */
  readonly waits: Waits;
  private readonly recorder: SessionRecorder;

  constructor(input: SessionInput, reading: Reading = {}) {
    // One patch for what new runs do, so that each costs one marker and one `TemporalChangeVersion`
    // upsert (a visibility write). `held-keys` (session/inbox.ts) stands for `shared-timer`
    // (session/timer.ts), which stands for `held-record`
    // (session-recorder.ts), which stands for `held-status`
    // (session/visibility.ts), which stands for `write-after-verdict` (session-recorder.ts), which stands
    // for `lean-history`, each adding to the one before; `lean-history` stands for provider events proven
    // (DESIGN decision 16; runs from before applied them as they came), record writes scheduled at the
    // change (session-recorder.ts), and search attributes shown when settled (session/visibility.ts).
    // Older runs replay as they ran.
    const heldKeys = wf.patched(HELD_KEYS_PATCH);
    const sharedTimer = heldKeys || wf.patched(SHARED_TIMER_PATCH);
    const heldRecord = sharedTimer || wf.patched(HELD_RECORD_PATCH);
    const held = heldRecord || wf.patched(HELD_STATUS_PATCH);
    const afterVerdict = held || wf.patched(WRITE_AFTER_VERDICT_PATCH);
    const lean = afterVerdict || wf.patched(LEAN_HISTORY_PATCH);
    const proofRequired = lean || wf.patched('provider-proof');
    // A run carried from one before structured reasons holds strings (common/legacy-reasons.ts).
    const state = (this.state = input.carried
      ? upgradeSessionReasons(input.carried)
      : newSessionState(input, iso(createdAt())));
    // Webhook verifications take turns (see LocalLane), and so do the writes of runs begun before
    // the recorder scheduled them where the change is made.
    const lane = new LocalLane();
    // Writes the session's record and its events to the store (DESIGN decision 15).
    const verdicts = { pending: () => !this.inbox.empty, judged: () => this.inbox.judged };
    // Every wait with a timeout on one timer (shared-timer); runs from before keep a timer per wait.
    const waits = (this.waits = sharedTimer ? new SharedTimer() : ownTimers);
    // One hold for the search attributes and (held-record) the record: one timer for both. Runs patched
    // only held-status hold the search attributes alone, for exactly what they held them for.
    const hold = heldRecord
      ? new Hold(HOLD_MS, () => this.actionable() || this.visibility.urgent(), waits)
      : held
        ? new Hold(HOLD_MS, () => this.isFinal() || this.rules.waitsForSomeone() || this.visibility.urgent())
        : undefined;
    this.recorder = new SessionRecorder(
      state,
      () => this.view(),
      lane,
      lean,
      afterVerdict ? verdicts : undefined,
      heldRecord ? hold : undefined,
      heldRecord && input.start.by === 'starter' && !input.carried,
    );
    this.visibility = new Visibility(lean, () => this.inbox.empty, hold);
    const announcer = new SessionAnnouncer(state.sessionId, this.recorder, this.visibility, input.notify);
    const emit = announcer.perform.bind(announcer);
    this.rules = new SessionReducer(state, { now: () => Date.now(), emit, reading });
    this.record = this.rules.record;
    // Created and the starting call's snapshot come first: the kind's file registers the signal handlers
    // right after (steps/messages.ts), which delivers the signals buffered for the first activation (a
    // provider webhook sent before the workflow ran) that could otherwise announce the result first.
    if (!input.carried) {
      this.record.log('call', 'created', `${input.kind} ${input.reference}`);
      this.record.announce('session.created');
      if (input.initialSnapshot) this.rules.apply(input.initialSnapshot, 'call', 'initiate');
    }
    this.inbox = new ProviderInbox(
      state,
      this.rules,
      lane,
      proofRequired,
      heldKeys ? new HeldKeys() : undefined,
    );
    this.decisions = new Decisions(this.record);
    this.runtime = new SessionRuntime(
      input,
      state,
      this.rules,
      this.inbox,
      this.recorder,
      this.decisions,
      this.visibility,
      waits,
    );
    // A later run (a refund or a late event after the workflow closed) follows for another window.
    if (input.reopened) state.followUntil = Date.now() + state.settings.followMs;
  }

  get id(): string {
    return this.state.sessionId;
  }

  /** The phase a caller sees: final once final; needs_attention while paysaga keeps trying. */
  get phase(): SessionPhase {
    return this.record.phase;
  }

  isFinal(): boolean {
    return this.state.final !== undefined;
  }

  /** What callers see. */
  view(): SessionView {
    return sessionViewOf(this.state);
  }

  /** What an Update answers: the view, whose version is written now, not after the hold. */
  answer(): SessionView {
    this.recorder.writeNow();
    return this.view();
  }

  /**
   * Progress someone can act on: a result, attention, a wait for the payer or a person (a widget ready
   * for its payer included).
   */
  actionable(): boolean {
    const { state } = this;
    return (
      this.isFinal() ||
      state.attention !== undefined ||
      this.rules.waitsForSomeone() ||
      (state.publicToken !== undefined && !operationOf(state.snapshot))
    );
  }

  /** Long poll (awaitChange): the next change, or progress someone can act on, or the timeout. */
  async awaitChange(wait: AwaitChange): Promise<SessionView> {
    const state = this.state;
    const after = wait.afterVersion ?? state.version;
    await this.waits.condition(
      () => (wait.until === 'progress' ? this.actionable() : state.version > after),
      Math.max(1, Math.min(wait.timeoutMs, 60_000)),
    );
    return this.answer();
  }

  /**
   * Lets running Updates finish, then returns what the next run (or a reader of the result) needs.
   * Kinds that take refunds end their aftercare settled, in this same activation (no Update can
   * arrive in between), so nothing is owed here.
   */
  async close(): Promise<SessionState> {
    await this.runtime.settled();
    this.visibility.flush();
    return { ...this.state };
  }
}
