/**
 * The session as others see it without asking the workflow: its record in paysaga's store (the API,
 * backends and the event outbox read it there) and its search attributes in Temporal (what an operator
 * filters on in the UI).
 *
 * Both follow the session when it comes to rest: its process waits (for news, a person, a pause) with
 * nothing that would wake it, and no provider call or verification of its own is in flight. A step that
 * calls the provider and applies the answer changes the session several times in a row, and news that
 * the process is about to act on is no rest either; what the session comes to rest with is written, once, by the `recordSession` activity (the session's state,
 * operations, new audit entries and the events announced since, in one transaction, forward only by
 * version). One write at a time: a change made while one is in flight is written when it is done. The
 * process never waits for the store (a store that is down delays the record, not the payment), except
 * where someone is told an answer: an Update answers once its version is stored (`saved`), so a caller
 * that reads the store next finds what it was told, and the run ends only once everything is stored.
 */
import type { SearchAttributeUpdatePair } from '@temporalio/common';
import * as wf from '@temporalio/workflow';
import type { SessionRecord, StoreActivities } from '../../activities/store-activities';
import type { PaysagaEvent } from '../../common/events';
import type { SessionState } from '../../common/session-input';
import type { SessionView } from '../../common/views';
import { waitUntil } from '../wait';

/** Retried until the store takes it: a store that is down for minutes delays the record, nothing else. */
const store = wf.proxyActivities<StoreActivities>({
  startToCloseTimeout: '15s',
  retry: { initialInterval: '500ms', backoffCoefficient: 2, maximumInterval: '15s' },
});

export class SessionRecorder {
  /** Announced and not confirmed stored: every write carries them all, in order. */
  private unconfirmed: PaysagaEvent[] = [];
  /** How many of `unconfirmed` no write has carried yet. */
  private uncarried = 0;
  /** Search attributes set and not shown yet, by name (the last value set wins). */
  private readonly attributes = new Map<string, SearchAttributeUpdatePair>();
  /** The version the last write carried (-1: none yet in this run). */
  private writtenVersion = -1;
  /** Provider calls and verifications of this session in flight. */
  private calls = 0;
  /** Work done for the session elsewhere that it waits on like a call of its own (see `awaiting`). */
  private elsewhere = 0;
  /** What would wake the process from its wait (see `resting`); none while it is at work. */
  private readonly wakes = new Set<() => boolean>();
  /** The version the last finished write stored, and the session as it showed it. */
  private storedVersion = -1;
  private storedView?: SessionView;
  /** The highest version an Update waits to see stored (see `saved`). */
  private askedVersion = -1;

  constructor(
    private readonly state: SessionState,
    /** What callers see, computed when a write is made. */
    private readonly view: () => SessionView,
  ) {
    void this.writeAtRest();
  }

  /** Queues an outbound event: stored (and so delivered) with the next write. */
  announce(event: PaysagaEvent): void {
    this.unconfirmed.push(event);
    this.uncarried++;
  }

  /** Sets search attributes: shown with the next write. */
  show(pairs: SearchAttributeUpdatePair[]): void {
    for (const pair of pairs) this.attributes.set(pair.key.name, pair);
  }

  /** Runs a provider call or a verification: the session is not at rest meanwhile. */
  during<T>(work: () => Promise<T>): Promise<T> {
    return this.counted(work, 1, 0);
  }

  /**
   * Runs a wait for work done for the session elsewhere (the starter sending card data): the session is
   * not at rest meanwhile, but an Update's answer does not wait for it.
   */
  awaiting<T>(work: () => Promise<T>): Promise<T> {
    return this.counted(work, 0, 1);
  }

  private counted<T>(work: () => Promise<T>, calls: number, elsewhere: number): Promise<T> {
    this.calls += calls;
    this.elsewhere += elsewhere;
    const done = () => {
      this.calls -= calls;
      this.elsewhere -= elsewhere;
    };
    let working: Promise<T>;
    try {
      working = work();
    } catch (err) {
      done();
      throw err;
    }
    working.then(done, done);
    return working;
  }

  /**
   * Waits for `wake` (up to `ms`; true if woken), as the process does for news, a person or a pause: the
   * session is at rest meanwhile, unless something that would wake it has happened.
   */
  resting(wake: () => boolean, ms?: number): Promise<boolean> {
    this.wakes.add(wake);
    const waiting = waitUntil(wake, ms);
    const done = () => {
      this.wakes.delete(wake);
    };
    waiting.then(done, done);
    return waiting;
  }

  /**
   * Resolves once the session as it is now is stored and shown (an Update's answer; the run's end), with
   * the session as the store then holds it: what a caller is told is what it reads from the store next.
   * Asked, the write waits only for the session's own calls in flight and the news the process is about
   * to act on (which it would otherwise miss by moments), not for the process to rest.
   */
  async saved(): Promise<SessionView> {
    const version = this.state.version;
    this.askedVersion = Math.max(this.askedVersion, version);
    await wf.condition(() => this.storedVersion >= version);
    return this.storedView ?? this.view();
  }

  /** At rest: the process waits with nothing to wake it, and nothing of the session's own is in flight. */
  private atRest(): boolean {
    return this.calls === 0 && this.elsewhere === 0 && this.wakes.size > 0 && this.unwoken();
  }

  /** Asked for (see `saved`): no call of the session's own in flight, and the process not about to act. */
  private askedFor(): boolean {
    return this.askedVersion > this.storedVersion && this.calls === 0 && this.unwoken();
  }

  /** Nothing the process waits for has happened (it is not about to act on news). */
  private unwoken(): boolean {
    for (const wake of this.wakes) if (wake()) return false;
    return true;
  }

  /** Shows the search attributes set so far at once (before a continue-as-new, which inherits them). */
  showNow(): void {
    const changed = [...this.attributes.values()].filter((pair) => !shown(pair));
    this.attributes.clear();
    if (changed.length > 0) wf.upsertSearchAttributes(changed);
  }

  private due(): boolean {
    return this.state.version !== this.writtenVersion || this.uncarried > 0 || this.attributes.size > 0;
  }

  private async writeAtRest(): Promise<void> {
    for (;;) {
      await wf.condition(() => this.due() && (this.atRest() || this.askedFor()));
      this.showNow();
      if (this.state.version === this.writtenVersion && this.uncarried === 0) continue;
      // The version as it is now: the record's state is the live one, serialized when it is sent.
      const version = this.state.version;
      const view = this.view();
      const record = this.record(view);
      this.writtenVersion = version;
      this.uncarried = 0;
      try {
        await store.recordSession(record);
        this.unconfirmed = this.unconfirmed.filter((e) => !record.events.includes(e));
        this.state.auditRecorded = Math.max(this.state.auditRecorded ?? 0, record.audit.at(-1)?.seq ?? 0);
        this.storedVersion = version;
        this.storedView = view;
      } catch (err) {
        // Only a record the store refuses for good ends here (the policy retries everything else): the
        // next change writes the session again, with these events.
        wf.log.error('session not recorded', {
          version,
          error: err instanceof wf.ActivityFailure ? (err.cause?.message ?? err.message) : String(err),
        });
        // Nobody waits forever on a record the store refuses for good: the log says it.
        this.storedVersion = version;
      }
    }
  }

  /** What the store is given: the session as it is now, with what it has not confirmed yet. */
  private record(view: SessionView): SessionRecord {
    const { state } = this;
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
      events: [...this.unconfirmed],
    };
  }
}

/** Whether the run already shows this value (the SDK keeps the start's attributes and every upsert). */
function shown({ key, value }: SearchAttributeUpdatePair): boolean {
  const current: unknown = wf.workflowInfo().typedSearchAttributes.get(key);
  if (current instanceof Date && value instanceof Date) return current.getTime() === value.getTime();
  if (Array.isArray(current) && Array.isArray(value))
    return current.length === value.length && current.every((v, i) => v === value[i]);
  return current === value;
}
