/**
 * How a session waits and talks to the provider: provider calls that are never given up (the session
 * needs attention while one fails, and goes on trying), waits that take news by signal and poll
 * transaction/state when news is late, the partner's decisions carried out one at a time, and
 * continue-as-new by one rule (the history limit, or the server's suggestion) that never cuts an Update
 * or a refund short.
 */
import * as wf from '@temporalio/workflow';
import { reason } from '../../common/reasons';
import type { SessionInput, SessionState } from '../../common/session-input';
import { nextPollWait } from '../../common/settings';
import { untilAnswered, provider } from '../calls';
import { HISTORY_LIMITS, historyLong } from '../history';
import type { DecisionSlot } from './decision-slot';
import type { ProviderInbox } from './inbox';
import type { SessionRecorder } from './recorder';
import type { SessionReducer } from './reducer';

/** Older than this, a snapshot is read again before a money-moving call is sent on its word. */
const STALE_MS = 10 * 60_000;

export class SessionRuntime {
  private readonly historyLimit: number;

  constructor(
    private readonly input: SessionInput,
    private readonly state: SessionState,
    private readonly reducer: SessionReducer,
    private readonly inbox: ProviderInbox,
    private readonly recorder: SessionRecorder,
    private readonly decision: DecisionSlot,
  ) {
    this.historyLimit = input.continueAsNewAfter ?? HISTORY_LIMITS.session;
  }

  /** When `step` was first sent (it is resent only after a look at the state), or undefined. */
  sentAt(step: string): number | undefined {
    return this.state.sent[step];
  }
  noteSent(step: string): void {
    this.state.sent[step] ??= Date.now();
  }

  /** The snapshot is old enough that the provider may have moved on (a resend reads the state first). */
  stale(): boolean {
    return this.state.snapshotAt === undefined || Date.now() - this.state.snapshotAt > STALE_MS;
  }

  /** Reads the state for a look asked for (inbox `lookAsked`). */
  async look(): Promise<void> {
    this.inbox.lookAsked = false;
    await this.poll();
  }

  /**
   * A provider call that must eventually be answered. Temporal retries it a few times (its policy);
   * when those run out, the session needs attention and the call is tried again on a capped backoff
   * until the provider answers. A refusal (the provider says no for good) is thrown to the caller;
   * for reads (`readOnly`) nothing is final, so they are retried too.
   */
  async call<T>(what: string, send: () => Promise<T>, readOnly = false): Promise<T> {
    const { polling } = this.state.settings;
    const answer = await untilAnswered(() => this.recorder.during(send), {
      pauseMs: polling.initialMs,
      maxMs: polling.maxMs,
      retryRefusals: readOnly,
      onTrouble: (message) =>
        this.reducer.journal.needsAttention(reason('provider_call_failing', message, { subject: what })),
      pause: (ms) => this.rest(() => false, ms).then(() => undefined),
      // An outage of days must not outgrow the history. Not from inside an Update (continue-as-new
      // waits for handlers to finish): the process resumes from its state and resends after a look.
      between: () => (this.decision.running === 0 ? this.continueAsNewIfDue() : Promise.resolve()),
    });
    if (this.reducer.journal.attentionFor('provider_call_failing', what))
      this.reducer.journal.clearAttention();
    return answer;
  }

  /** Reads transaction/state and applies it. */
  async poll(): Promise<void> {
    const c = this.callArgs();
    this.reducer.apply(
      await this.call('transaction/state', () => provider.getState(c), true),
      'poll',
      'state',
    );
  }

  /** The session id, sub-merchant and project every call of this session carries. */
  callArgs(): { sessionId: string; submerchantId?: string; projectId?: string } {
    const { submerchantId, projectId } = this.state.request;
    return {
      sessionId: this.state.sessionId,
      ...(submerchantId ? { submerchantId } : {}),
      ...(projectId ? { projectId } : {}),
    };
  }

  /**
   * Waits, forward only, until `pred` holds; false if `deadline` (epoch ms) passed first (after one last
   * look at the provider). News comes by signal; when it is late (with webhooks on, `lateAfterMs`; off,
   * at once) the state is polled on a backoff capped at `capMs` (the policy's `maxMs` unless the caller
   * waits for a person). A person's news is not late before that cap either, with webhooks on: their
   * return or the webhook tells at once, and the provider redelivers a webhook for 30 minutes (spec,
   * webhook rules), so a look sooner would find them still at it. A duplicate or older snapshot never
   * counts as news.
   * Continues-as-new when the history grows long, carrying everything.
   */
  async until(pred: () => boolean, deadline = Infinity, capMs?: number): Promise<boolean> {
    const { polling } = this.state.settings;
    const late = polling.webhooks ? polling.lateAfterMs : polling.initialMs;
    const first = polling.webhooks && capMs !== undefined ? Math.max(late, capMs) : late;
    let wait = first;
    for (;;) {
      if (pred()) return true;
      const remaining = deadline - Date.now();
      if (remaining <= 0) {
        await this.poll();
        return pred();
      }
      await this.continueAsNewIfDue();
      const seen = this.state.snapshot;
      if (!this.inbox.empty) {
        // News being checked is not late news: it is waited for as it is, without a timer of its own.
        await this.rest(() => this.inbox.empty || this.state.snapshot !== seen || pred());
        continue;
      }
      await this.rest(
        () => this.state.snapshot !== seen || this.inbox.lookAsked || pred(),
        Math.min(wait, remaining),
      );
      if (pred()) return true;
      if (this.state.snapshot !== seen) {
        // News: the next wait is for the next event again.
        wait = first;
        continue;
      }
      if (Date.now() >= deadline && !this.inbox.lookAsked) continue;
      this.inbox.lookAsked = false;
      await this.poll();
      // A look that finds nothing new proves no webhook was lost: the next look backs off from this wait
      // (as a subscription's does), never sooner. Starting over from initialMs once news was late had
      // every session waiting for its payer look again 2, 4, 8 s... after its first 30 s: with 1,000
      // waiting, many provider calls a second that could find nothing.
      if (this.state.snapshot === seen) wait = nextPollWait(wait, polling, capMs);
    }
  }

  /** Waits up to `ms` for `wake` (continuing as new first when the history grows long); true if woken. */
  async waitFor(wake: () => boolean, ms: number): Promise<boolean> {
    await this.continueAsNewIfDue();
    return this.rest(wake, ms);
  }

  /**
   * A wait of the process for `wake` (up to `ms`; true if woken): the session's record and search
   * attributes catch up meanwhile.
   */
  rest(wake: () => boolean, ms?: number): Promise<boolean> {
    return this.recorder.resting(wake, ms);
  }

  /**
   * Work done for the session outside its own calls that it waits on like one of its own (the starter
   * sending card data to the provider): the session is not at rest meanwhile.
   */
  onItsBehalf<T>(work: () => Promise<T>): Promise<T> {
    return this.recorder.awaiting(work);
  }

  /**
   * No handler running and every event handed over, checked together (an Update accepted while the
   * events were being flushed would otherwise fail when the run ends right after): true. False at once
   * when the process owes work a running Update waits for (a refund asked for and not yet sent): only
   * the caller can do it, so waiting here for that handler would wait forever.
   */
  async settled(): Promise<boolean> {
    do {
      await this.rest(() => (wf.allHandlersFinished() && this.inbox.empty) || this.owesWork());
      if (this.owesWork()) return false;
      await this.recorder.saved();
    } while (!wf.allHandlersFinished() || !this.inbox.empty);
    return true;
  }

  /** Work only the process itself does that a partner's Update may be waiting for (a refund to send). */
  owesWork(): boolean {
    return this.state.refunds.some((r) => r.status === 'requested');
  }

  private async continueAsNewIfDue(): Promise<void> {
    if (!historyLong(this.historyLimit)) return;
    const info = wf.workflowInfo();
    if (!(await this.settled())) {
      // A refund waits to be sent, and its Update waits for this loop: go on and send it first. Only a
      // history of twice the limit (an outage of days) continues as new anyway, once no decision is
      // being carried out: the waiting refund Updates then end with the run (their callers ask again
      // and reach the next run), and the next run sends the refund, carried as requested, under its key.
      if (info.historyLength < 2 * this.historyLimit) return;
      await this.rest(() => this.decision.running === 0);
      await this.recorder.saved();
    }
    this.reducer.journal.log('timer', 'continue_as_new', `history ${info.historyLength} events`);
    // The next run inherits the search attributes shown: show what is pending first.
    this.recorder.showNow();
    // The same workflow type with the same input, carrying everything (search attributes are inherited).
    await wf.continueAsNew({
      ...this.input,
      carried: { ...this.state, runs: this.state.runs + 1 },
      reopened: false,
    });
  }
}
