/**
 * Writes a session's record to the store (DESIGN decision 15): after every activation that changed the
 * session, one local activity writes its state (forward only by version), the operations, the provider
 * events received and the outbound events announced and not confirmed stored yet, in one transaction.
 * A store that is down only delays the write (retried without end); the process goes on meanwhile.
 *
 *   const recorder = new SessionRecorder(state, () => view, lane);
 *   recorder.announce(event);      // goes out with the next write
 *   await recorder.flushed();      // before the run ends or continues as new
 *
 * A write is scheduled where the change is made and nothing waits for the one before it: the same
 * command at the same point live and on replay, whatever the store's speed. Writes may overlap; the store
 * keeps the newest version, and events and audit entries are keyed, so a second copy changes nothing.
 * Runs begun before (no `record-at-change` marker) queue each write behind the one before, as they ran.
 * That queue is what made seed ea49ebefc3 fail to replay: a write scheduled when the one before it
 * finished depends on when that write's result reaches the workflow, which is not the same live and
 * on replay when its workflow task timed out meanwhile (a killed worker); it then took the place of an
 * Update's provider call in the history. Scheduled at the change, a write depends on nothing but the
 * history, and what its result does (confirmations) schedules nothing.
 */
import * as wf from '@temporalio/workflow';
import type { StoreActivities, SessionRecord } from '../activities/store-activities';
import type { PaysagaEvent } from '../common/events';
import type { SessionState } from '../common/session-input';
import type { SessionView } from '../common/views';
import { LocalLane } from './local-lane';
import type { Hold } from './session/hold';

const store = wf.proxyLocalActivities<StoreActivities>({
  startToCloseTimeout: '15s',
  retry: { initialInterval: '200ms', backoffCoefficient: 2, maximumInterval: '15s' },
});

/** Marks runs whose writes are scheduled where the change is made (older runs queue them). */
export const RECORD_AT_CHANGE_PATCH = 'record-at-change';

/**
 * Marks runs whose write waits for the verdict on a provider event being verified (and stands for
 * `lean-history`: workflows/session.ts). The verdict usually changes the session again within
 * milliseconds (a checkout's start call reported, then its webhook proven: two versions), and the write
 * scheduled before it would be superseded at once: one local activity (about 6 ms of CPU with its
 * store transaction and marker, `bench sessions`) for a version nobody reads.
 */
export const WRITE_AFTER_VERDICT_PATCH = 'write-after-verdict';

/**
 * Marks runs whose record, like their search attributes, waits out the session's hold (session/hold.ts)
 * before it writes a change on the way (and stands for `held-status`, and so for every patch before). A
 * 3-D Secure checkout is recorded starting, then awaiting approval, approved, and awaiting its payer
 * within a second: four writes, each a local activity, a store transaction and a marker, of which only
 * the last could be read by anyone (its creating request answers with the payer's redirect). A session
 * is written in its first task, unless its starter sends the card (its report is an Update); what someone
 * must see at once is written at once: a final phase, a wait for someone, attention, and every Update's
 * answer (`writeNow`: a caller that reads the store after it is answered finds what it was told).
 */
export const HELD_RECORD_PATCH = 'held-record';

/** What the recorder asks of the provider inbox (session/inbox.ts) in runs patched write-after-verdict. */
export interface Verdicts {
  /** A delivery is waiting for its verdict. */
  pending(): boolean;
  /** How many deliveries have been judged so far. */
  judged(): number;
}

export class SessionRecorder {
  /** Announced and not confirmed stored: every write carries them all, in order. */
  private unconfirmed: PaysagaEvent[] = [];
  /** How many of `unconfirmed` no write has carried yet. */
  private unsent = 0;
  private scheduledVersion = -1;
  private writing = 0;
  /** A write is asked for now (an Update's answer, the run's end): the hold is over. */
  private asked = false;

  /**
   * `view` is what callers see, computed only when a write is made: `due` runs on every activation
   * (it is a condition), so it looks at the version alone.
   */
  constructor(
    private readonly state: SessionState,
    private readonly view: () => SessionView,
    private readonly lane = new LocalLane(),
    /** Runs patched `lean-history` (session/visibility.ts) write at the change without asking. */
    atChange = false,
    /** Runs patched write-after-verdict: a write due while an event is verified waits for its verdict. */
    private readonly verdicts?: Verdicts,
    /** Runs patched held-record: a write after the first waits out the session's hold. */
    private readonly hold?: Hold,
    /**
     * The first write waits out the hold too: a session whose starter sends the card is told the
     * provider's answer by an Update within milliseconds (its answer is written at once), and nobody
     * has the session's id before that answer.
     */
    private readonly holdFirst = false,
  ) {
    void (atChange || wf.patched(RECORD_AT_CHANGE_PATCH) ? this.writeAtChange() : this.writeQueued());
  }

  /** Queues an outbound event: stored (and so delivered) with the next write. */
  announce(event: PaysagaEvent): void {
    this.unconfirmed.push(event);
    this.unsent++;
  }

  /** Resolves once every change and event so far is in the store. */
  async flushed(): Promise<void> {
    this.writeNow();
    await wf.condition(() => this.writing === 0 && !this.due());
  }

  /** What is due is written without waiting out the hold (an Update answers with it). */
  writeNow(): void {
    if (this.due()) this.asked = true;
  }

  private due(): boolean {
    return this.unsent > 0 || this.state.version !== this.scheduledVersion;
  }

  /** What the store is given: the session as it is now, with what it has not confirmed yet. */
  private record(events: PaysagaEvent[]): SessionRecord {
    const { state } = this;
    const view = this.view();
    const audited = state.auditRecorded ?? 0;
    const total = state.auditCount ?? 0;
    const fresh = state.providerEvents.slice(Math.max(0, state.providerEvents.length - (total - audited)));
    return {
      state,
      summary: {
        phase: view.phase,
        final: view.final,
        needsAttention: view.attention !== undefined,
        ...(view.request.money
          ? {
              amount: state.finalizeAmount ?? view.request.money.amount,
              currency: view.request.money.currency,
            }
          : {}),
        ...(state.request.customerId ? { customerId: state.request.customerId } : {}),
        createdAt: view.createdAt,
        ...(view.finalAt ? { finalAt: view.finalAt } : {}),
      },
      operations: view.operations,
      audit: fresh.map((e, i) => ({ ...e, seq: total - fresh.length + i + 1 })),
      events,
    };
  }

  /** Confirms what a write stored: its events and audit entries need not be carried again. */
  private stored(record: SessionRecord): void {
    this.unconfirmed = this.unconfirmed.filter((e) => !record.events.includes(e));
    const { state } = this;
    state.auditRecorded = Math.max(state.auditRecorded ?? 0, record.audit.at(-1)?.seq ?? 0);
  }

  private async writeAtChange(): Promise<void> {
    for (;;) {
      await wf.condition(() => this.due());
      // A session is in the store from its first task (unless its starter reports at once); later
      // changes on the way wait out the hold.
      if (this.hold && (this.scheduledVersion >= 0 || this.holdFirst)) await this.hold.over(() => this.asked);
      const { verdicts } = this;
      if (verdicts?.pending()) {
        // One verdict at most: a run of deliveries (a provider redelivering) never holds a write back longer.
        const judged = verdicts.judged();
        await wf.condition(() => !verdicts.pending() || verdicts.judged() !== judged);
      }
      const record = this.record([...this.unconfirmed]);
      this.scheduledVersion = record.state.version;
      this.unsent = 0;
      this.asked = false;
      this.writing++;
      // Not awaited: the next change schedules its own write at once, whatever this one is doing. One
      // `then` with both outcomes: each promise a workflow makes costs a stack trace (the SDK's hook).
      void store.recordSession(record).then(
        () => {
          this.writing--;
          this.stored(record);
        },
        (err: unknown) => {
          this.writing--;
          wf.log.error('session not recorded', {
            version: record.state.version,
            error: err instanceof wf.ActivityFailure ? (err.cause?.message ?? err.message) : String(err),
          });
        },
      );
    }
  }

  /** Runs begun before `record-at-change`: one write at a time, each after the one before. */
  private async writeQueued(): Promise<void> {
    for (;;) {
      await wf.condition(() => this.due());
      this.writing++;
      try {
        const version = this.state.version;
        const total = this.state.auditCount ?? 0;
        const record = this.record(this.unconfirmed.splice(0));
        this.unsent = 0;
        await this.lane.run(() => store.recordSession(record));
        this.state.auditRecorded = Math.max(this.state.auditRecorded ?? 0, total);
        this.scheduledVersion = version;
      } finally {
        this.writing--;
      }
    }
  }
}
