/**
 * One payment session as its workflow knows it. The process itself (start, approval, payer, finalization,
 * outcome, aftercare) lives in the kind files and their steps (workflows/steps/); they reach the session
 * through its parts (workflows/session/), each named for what it does:
 *   state     the session's data, carried from run to run (the steps keep their own part of it: the
 *             start, refunds, renewals, payouts);
 *   reducer   what a provider snapshot means: the phase (final once final), the result and why, drift,
 *             the amount check; payouts, refunds and chargebacks announced once;
 *   journal   the event log, attention, search attributes and outbound events;
 *   inbox     provider news by signal, verified by the worker before it is believed, and the webhook
 *             audit trail;
 *   runtime   provider calls never given up, waits that poll when news is late, continue-as-new;
 *   decision  the partner's decision being carried out, one at a time;
 *   recorder  the session's record in the store and its search attributes, written when it comes to rest.
 */
import * as wf from '@temporalio/workflow';
import type { SessionPhase } from '../common/kinds';
import { CreatedAt } from '../common/search-attributes';
import { newSessionState, type SessionInput, type SessionState } from '../common/session-input';
import { sessionViewOf } from '../common/session-view';
import type { SessionView } from '../common/views';
import { iso } from './iso';
import { SessionAnnouncer } from './session/announcer';
import { DecisionSlot } from './session/decision-slot';
import { ProviderInbox } from './session/inbox';
import type { SessionJournal } from './session/journal';
import { SessionRecorder } from './session/recorder';
import { SessionReducer, type Reading } from './session/reducer';
import { SessionRuntime } from './session/runtime';

export type { Reading } from './session/reducer';

/** The CreatedAt search attribute it was started with, so that a search by time finds what the view says. */
function createdAt(): number {
  return wf.workflowInfo().typedSearchAttributes.get(CreatedAt)?.getTime() ?? Date.now();
}

export class Session {
  readonly state: SessionState;
  readonly reducer: SessionReducer;
  readonly journal: SessionJournal;
  readonly inbox: ProviderInbox;
  readonly runtime: SessionRuntime;
  readonly decision: DecisionSlot;
  private readonly recorder: SessionRecorder;

  constructor(input: SessionInput, reading: Reading = {}) {
    const state = (this.state = input.carried ?? newSessionState(input, iso(createdAt())));
    this.recorder = new SessionRecorder(state, () => this.view());
    const announcer = new SessionAnnouncer(state.sessionId, this.recorder, input.notify);
    this.reducer = new SessionReducer(state, {
      now: () => Date.now(),
      emit: (effect) => announcer.perform(effect),
      reading,
    });
    this.journal = this.reducer.journal;
    // Created and the starting call's snapshot come first: the kind's file registers the signal handlers
    // right after (steps/messages.ts), which delivers the signals buffered for the first activation (a
    // provider webhook sent before the workflow ran) that could otherwise announce the result first.
    if (!input.carried) {
      this.journal.log('call', 'created', `${input.kind} ${input.reference}`);
      this.journal.announce('session.created');
      if (input.initialSnapshot) this.reducer.apply(input.initialSnapshot, 'call', 'initiate');
    }
    this.inbox = new ProviderInbox(state, this.reducer, this.recorder);
    this.decision = new DecisionSlot(this.journal);
    this.runtime = new SessionRuntime(input, state, this.reducer, this.inbox, this.recorder, this.decision);
    // A later run (a refund or a late event after the workflow closed) follows for another window.
    if (input.reopened) state.followUntil = Date.now() + state.settings.followMs;
  }

  get id(): string {
    return this.state.sessionId;
  }

  /** The phase a caller sees: final once final; needs_attention while paysaga keeps trying. */
  get phase(): SessionPhase {
    return this.journal.phase;
  }

  isFinal(): boolean {
    return this.state.final !== undefined;
  }

  /** What callers see. */
  view(): SessionView {
    return sessionViewOf(this.state);
  }

  /** What an Update answers: the session as the store holds it (a caller may read the store next). */
  answer(): Promise<SessionView> {
    return this.recorder.saved();
  }

  /**
   * Lets running Updates finish, then returns what the next run (or a reader of the result) needs.
   * Kinds that take refunds end their aftercare settled, in this same activation (no Update can
   * arrive in between), so nothing is owed here.
   */
  async close(): Promise<SessionState> {
    await this.runtime.settled();
    this.recorder.showNow();
    return { ...this.state };
  }
}
