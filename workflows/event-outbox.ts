/**
 * The outbox of one subject (a session `ps_...` or a subscription `sub-...`), workflow id
 * `events-<subject>` (DESIGN decision 13). Workflows publish events to it with a quick signal
 * (signal-with-start, activities/event-activities.ts `publishEvent`); it:
 *
 *   - deduplicates by event id (the same change never goes out under two ids, nor twice by a retry);
 *   - releases events in `sequence` order: a later one is held back until the earlier ones arrived,
 *     at most `gapWaitMs` (a lost sequence number must not block the subject forever); a sequence
 *     number given up on that turns up later is still sent, marked `late`;
 *   - asks the registry which endpoints want each released event (none: the event is only recorded,
 *     listable and tail-able; nothing is sent);
 *   - delivers per endpoint in order (one lane per endpoint, lanes independent: a dead endpoint never
 *     delays another), retrying with growing pauses until `retryForMs` after the event was queued,
 *     then marks it failed there and goes on with the next; every attempt is recorded;
 *   - redelivers on request, also after it closed (a new run picks up the closed run's records);
 *   - continues as new with what is pending before its history grows large, and closes after
 *     `idleMs` with nothing to do (its result keeps the records for a later run).
 *
 * Secrets never pass through here: the delivery activity reads them at sending time.
 */
import * as wf from '@temporalio/workflow';
import type { EventDeliveryActivities, EventOutboxActivities } from '../activities/event-activities';
import { eventId as makeEventId, type PaysagaEvent } from '../common/events';
import {
  MAX_ATTEMPTS_KEPT,
  retryPauseMs,
  type DeliveryOutcome,
  type EndpointDelivery,
  type EventDeliveryPolicy,
  type EventRecord,
} from '../common/event-delivery';
import { EventTypes, LastEventAt } from '../common/search-attributes';
import { outboxEventSignal, outboxQuery, redeliverEventSignal } from '../common/event-messages';
import type { EventOutboxWorkflow, OutboxInput, OutboxState } from '../common/event-outbox-types';

/** Bookkeeping must eventually succeed (registry lookups, the policy): retried without limit. */
const BOOKKEEPING: wf.ActivityOptions & wf.LocalActivityOptions = {
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1 minute' },
};
const remoteBookkeeping = wf.proxyActivities<EventOutboxActivities>(BOOKKEEPING);
const localBookkeeping = wf.proxyLocalActivities<EventOutboxActivities>(BOOKKEEPING);
/**
 * The lookups are local activities (in the worker that runs the outbox: no task-queue round trip, one
 * marker in history) since this patch; runs that began before it go on with the scheduled activities.
 */
const LOCAL_BOOKKEEPING = 'outbox-local-bookkeeping';
const bookkeeping = () => (wf.patched(LOCAL_BOOKKEEPING) ? localBookkeeping : remoteBookkeeping);

/** Released events an outbox keeps (and shows); older finished ones are dropped first. */
export const MAX_RECORDS_KEPT = 50;
/** ...and at most about this much JSON, so what continue-as-new carries stays well below limits. */
const MAX_RECORDS_CHARS = 400_000;
const MAX_SKIPPED_KEPT = 200;

const iso = (ms: number) => new Date(ms).toISOString();

export function newOutboxState(subject: string): OutboxState {
  return {
    subject,
    nextSequence: null,
    knownFrom: 1,
    skipped: [],
    held: [],
    records: [],
    lanes: {},
    redeliveries: [],
    types: [],
    runs: 0,
  };
}

export async function eventOutboxWorkflow(input: OutboxInput, carried?: OutboxState): Promise<OutboxState> {
  const box = new Outbox(carried ? { ...carried, runs: carried.runs + 1 } : newOutboxState(input.subject));
  wf.setHandler(outboxEventSignal, (event) => box.arrive(event));
  wf.setHandler(redeliverEventSignal, (ask) => box.askRedelivery(ask));
  wf.setHandler(outboxQuery, () => box.state);

  // The publisher passes its worker's policy along (one lookup fewer per outbox); older starts did not.
  box.usePolicy(input.policy ?? (await bookkeeping().eventPolicy()));
  if (!carried) await box.learnWhereItStands();

  for (;;) {
    // Taken before looking: whatever changes from here on (a signal during an activity) wakes the wait.
    const version = box.version;
    box.throwIfBroken();
    const batch = box.takeReleasable(Date.now());
    if (batch.length) await box.release(batch);
    if (box.state.redeliveries.length) await box.queueRedeliveries();
    box.startLanes();
    if (box.historyIsLong()) {
      await box.stopLanes();
      await wf.condition(wf.allHandlersFinished);
      await wf.continueAsNew<typeof eventOutboxWorkflow>(input, box.state);
    }
    if (box.idle()) {
      // Nothing to do: close after idleMs unless something arrives. A later event starts a new run.
      if (!(await wf.condition(() => box.version !== version, box.policy.idleMs))) break;
    } else {
      const gap = box.gapRemainingMs(Date.now());
      const woken = () => box.version !== version || box.broken() || box.historyIsLong();
      if (gap === undefined) await wf.condition(woken);
      else await wf.condition(woken, Math.max(gap, 1));
    }
  }
  await wf.condition(wf.allHandlersFinished);
  return box.state;
}

class Outbox {
  /** Bumped by every change a waiting loop must look at. */
  version = 0;
  policy!: EventDeliveryPolicy;
  private delivery!: EventDeliveryActivities;
  private readonly running = new Set<string>();
  private draining = false;
  private failure: unknown;

  constructor(readonly state: OutboxState) {}

  usePolicy(policy: EventDeliveryPolicy): void {
    this.policy = policy;
    this.delivery = wf.proxyActivities<EventDeliveryActivities>({
      ...(policy.deliveryTaskQueue ? { taskQueue: policy.deliveryTaskQueue } : {}),
      // The activity answers within timeoutMs; beyond that its worker is gone (a crash): the attempt
      // is recorded as failed and retried after a pause like any other.
      startToCloseTimeout: policy.timeoutMs + 15_000,
      retry: { maximumAttempts: 1 },
    });
  }

  arrive(event: PaysagaEvent): void {
    if (event.id !== makeEventId(this.state.subject, event.sequence)) {
      wf.log.warn('event for another subject ignored', { eventId: event.id, subject: this.state.subject });
      return;
    }
    if (this.state.held.some((e) => e.id === event.id) || this.record(event.id)) return; // a repeat
    this.state.held.push(event);
    this.version++;
  }

  askRedelivery(ask: { eventId: string; endpointId?: string }): void {
    this.state.redeliveries.push(ask);
    this.version++;
  }

  /**
   * A new outbox (no earlier run carried over) whose first event is not sequence 1, or that was
   * started by a redelivery, had a predecessor that closed: take over its records and position.
   */
  async learnWhereItStands(): Promise<void> {
    const s = this.state;
    const lowest = Math.min(...s.held.map((e) => e.sequence));
    if (lowest === 1) {
      s.nextSequence = 1;
      return;
    }
    const prior = await bookkeeping().priorOutbox(s.subject);
    if (!prior) return; // position unknown: held back for gapWaitMs, then released from the lowest
    const arrived = s.held.filter((e) => !prior.records.some((r) => r.event.id === e.id));
    Object.assign(s, {
      ...prior,
      held: [...prior.held, ...arrived],
      redeliveries: [...prior.redeliveries, ...s.redeliveries],
      runs: s.runs,
    });
    this.version++;
  }

  /** Events to release now, in order: the next sequence numbers, late ones, or past a gap that timed out. */
  takeReleasable(now: number): { event: PaysagaEvent; late: boolean }[] {
    const s = this.state;
    const out: { event: PaysagaEvent; late: boolean }[] = [];
    if (s.nextSequence !== null) {
      const line = s.nextSequence;
      for (const e of s.held.filter((x) => x.sequence < line)) {
        s.held.splice(s.held.indexOf(e), 1);
        const skipped = s.skipped.indexOf(e.sequence);
        if (skipped >= 0) s.skipped.splice(skipped, 1);
        // Below the line and known: released before (its record may be gone), a repeat.
        if (skipped >= 0 || e.sequence < s.knownFrom) out.push({ event: e, late: true });
      }
    }
    s.held.sort((a, b) => a.sequence - b.sequence);
    // Position unknown, but 1 is always a subject's first event: start there.
    if (s.nextSequence === null && s.held[0]?.sequence === 1) s.nextSequence = 1;
    for (;;) {
      while (s.nextSequence !== null && s.held[0]?.sequence === s.nextSequence) {
        out.push({ event: s.held.shift()!, late: false });
        s.nextSequence++;
        delete s.heldSince;
      }
      if (s.held.length === 0) {
        delete s.heldSince;
        break;
      }
      s.heldSince ??= now;
      if (now - s.heldSince < this.policy.gapWaitMs) break;
      // The gap outlasted its wait: go on from the lowest arrived; the missing ones go out late if they come.
      const first = s.held[0]!.sequence;
      if (s.nextSequence === null) s.knownFrom = first;
      else for (let q = s.nextSequence; q < first; q++) s.skipped.push(q);
      s.skipped.splice(0, Math.max(0, s.skipped.length - MAX_SKIPPED_KEPT));
      if (s.nextSequence !== null)
        wf.log.warn('event gap given up', { subject: s.subject, from: s.nextSequence, to: first - 1 });
      s.nextSequence = first;
      delete s.heldSince;
    }
    return out;
  }

  gapRemainingMs(now: number): number | undefined {
    const since = this.state.heldSince;
    return since === undefined ? undefined : since + this.policy.gapWaitMs - now;
  }

  async release(batch: { event: PaysagaEvent; late: boolean }[]): Promise<void> {
    const s = this.state;
    const types = [...new Set(batch.map((b) => b.event.type))];
    const targets = await bookkeeping().eventTargets(types);
    const now = Date.now();
    for (const { event, late } of batch) {
      const rec: EventRecord = {
        event,
        releasedAt: iso(now),
        ...(late ? { late: true } : {}),
        deliveries: (targets[event.type] ?? []).map((id) => newDelivery(id, now)),
      };
      s.records.push(rec);
      for (const d of rec.deliveries) this.lane(d.endpointId).push(event.id);
      if (!s.types.includes(event.type)) s.types.push(event.type);
      if (!s.lastEventAt || event.created > s.lastEventAt) s.lastEventAt = event.created;
    }
    wf.upsertSearchAttributes([
      { key: EventTypes, value: [...s.types] },
      ...(s.lastEventAt ? [{ key: LastEventAt, value: new Date(s.lastEventAt) }] : []),
    ]);
    this.trimRecords();
    this.version++;
  }

  async queueRedeliveries(): Promise<void> {
    const s = this.state;
    for (const ask of s.redeliveries.splice(0)) {
      const rec = this.record(ask.eventId);
      if (!rec) {
        wf.log.warn('redelivery of an event this outbox no longer keeps', { eventId: ask.eventId });
        continue;
      }
      let ids = ask.endpointId ? [ask.endpointId] : rec.deliveries.map((d) => d.endpointId);
      if (ids.length === 0) ids = (await bookkeeping().eventTargets([rec.event.type]))[rec.event.type] ?? [];
      const now = Date.now();
      for (const id of ids) {
        let d = rec.deliveries.find((x) => x.endpointId === id);
        if (d?.status === 'pending') continue; // on its way already
        if (!d) {
          d = newDelivery(id, now);
          rec.deliveries.push(d);
        } else {
          Object.assign(d, { status: 'pending', queuedAt: iso(now), roundAttempts: 0 });
          delete d.deliveredAt;
          delete d.failedAt;
          delete d.nextAttemptAt;
        }
        d.redeliveries++;
        this.lane(id).push(rec.event.id);
      }
    }
    this.version++;
  }

  startLanes(): void {
    if (this.draining) return;
    for (const [endpointId, lane] of Object.entries(this.state.lanes)) {
      if (lane.length === 0 || this.running.has(endpointId)) continue;
      this.running.add(endpointId);
      this.runLane(endpointId)
        .catch((err) => (this.failure ??= err))
        .finally(() => {
          this.running.delete(endpointId);
          if (this.state.lanes[endpointId]?.length === 0) delete this.state.lanes[endpointId];
          this.version++;
        });
    }
  }

  /** Lanes stop after the attempt in flight (a pause is cut short; its due time is carried). */
  async stopLanes(): Promise<void> {
    this.draining = true;
    this.version++;
    await wf.condition(() => this.running.size === 0);
  }

  historyIsLong(): boolean {
    const info = wf.workflowInfo();
    return info.continueAsNewSuggested || info.historyLength >= this.policy.maxHistoryEvents;
  }

  idle(): boolean {
    const s = this.state;
    return (
      s.held.length === 0 &&
      s.redeliveries.length === 0 &&
      this.running.size === 0 &&
      Object.values(s.lanes).every((l) => l.length === 0)
    );
  }

  broken(): boolean {
    return this.failure !== undefined;
  }

  throwIfBroken(): void {
    if (this.failure !== undefined) throw this.failure;
  }

  private async runLane(endpointId: string): Promise<void> {
    const lane = () => this.state.lanes[endpointId] ?? [];
    while (!this.draining) {
      const eventId = lane()[0];
      if (eventId === undefined) return;
      const rec = this.record(eventId);
      const d = rec?.deliveries.find((x) => x.endpointId === endpointId);
      if (!rec || !d || d.status !== 'pending') {
        lane().shift();
        continue;
      }
      const wait = (d.nextAttemptAt ?? 0) - Date.now();
      if (wait > 0 && (await wf.condition(() => this.draining, wait))) return;
      this.apply(eventId, endpointId, d, await this.send(rec, d));
      this.version++;
    }
  }

  private async send(rec: EventRecord, d: EndpointDelivery): Promise<DeliveryOutcome> {
    const started = Date.now();
    try {
      return await this.delivery.deliverEvent({
        endpointId: d.endpointId,
        event: rec.event,
        redelivery: d.redeliveries > 0,
      });
    } catch (err) {
      if (!(err instanceof wf.ActivityFailure)) throw err;
      return {
        at: iso(started),
        latencyMs: Date.now() - started,
        error: `no outcome heard (the delivery activity failed: ${err.cause?.message ?? err.message})`,
        ...(d.redeliveries > 0 ? { redelivery: true } : {}),
      };
    }
  }

  private apply(eventId: string, endpointId: string, d: EndpointDelivery, outcome: DeliveryOutcome): void {
    const { gone, ...attempt } = outcome;
    d.attempts.push(attempt);
    d.attempts.splice(0, Math.max(0, d.attempts.length - MAX_ATTEMPTS_KEPT));
    d.attemptCount++;
    d.roundAttempts++;
    const lane = this.lane(endpointId);
    const now = Date.now();
    if (attempt.status !== undefined && attempt.status >= 200 && attempt.status < 300) {
      d.status = 'delivered';
      d.deliveredAt = attempt.at;
      delete d.nextAttemptAt;
      lane.shift();
    } else if (gone) {
      // The endpoint was deleted: nothing more goes there.
      for (const id of lane.splice(0)) {
        const other = this.record(id)?.deliveries.find((x) => x.endpointId === endpointId);
        if (other?.status === 'pending') {
          other.status = 'canceled';
          delete other.nextAttemptAt;
        }
      }
    } else if (now >= Date.parse(d.queuedAt) + this.policy.retryForMs) {
      d.status = 'failed';
      d.failedAt = iso(now);
      delete d.nextAttemptAt;
      lane.shift();
      wf.log.warn('event delivery failed', { eventId, endpointId, attempts: d.roundAttempts });
    } else {
      d.nextAttemptAt = now + retryPauseMs(this.policy, d.roundAttempts);
    }
  }

  private record(eventId: string): EventRecord | undefined {
    return this.state.records.find((r) => r.event.id === eventId);
  }

  private lane(endpointId: string): string[] {
    return (this.state.lanes[endpointId] ??= []);
  }

  /** Drops the oldest records with nothing pending while there are too many (or too much). */
  private trimRecords(): void {
    const recs = this.state.records;
    const pending = (r: EventRecord) => r.deliveries.some((d) => d.status === 'pending');
    let chars = JSON.stringify(recs).length;
    while (recs.length > 1 && (recs.length > MAX_RECORDS_KEPT || chars > MAX_RECORDS_CHARS)) {
      const i = recs.findIndex((r) => !pending(r));
      if (i < 0) break;
      chars -= JSON.stringify(recs[i]).length;
      recs.splice(i, 1);
    }
  }
}

function newDelivery(endpointId: string, now: number): EndpointDelivery {
  return {
    endpointId,
    status: 'pending',
    queuedAt: iso(now),
    attempts: [],
    attemptCount: 0,
    roundAttempts: 0,
    redeliveries: 0,
  };
}

// The signature common/event-publishing.ts starts this workflow with.
const _signature: EventOutboxWorkflow = eventOutboxWorkflow;
