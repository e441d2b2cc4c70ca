import { randomUUID, sign, type KeyObject } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { Agent, request } from 'undici';
import type { DeliveryRecord, DeliveryState } from './delivery-record';
import type { FaultInjector } from './faults';
import { MemoryStore, type SandboxStore } from './store';
import { attemptTimeoutMs, GIVE_UP_AFTER_MS, nextPauseMs } from './webhook-schedule';

/*
 * Signed webhook delivery of the sandbox (spec, Events and Authentication).
 *
 * - Body `{type, session_info}` is serialized once; `X-Signature` is Base64 RSA-SHA256 over exactly those
 *   bytes with the service private key, and the same bytes are sent on every attempt.
 * - Any 2xx counts as delivered (the spec asks the partner for 200; a proxy answering 204 should not cause
 *   endless redelivery). Anything else, a timeout or a connection error is a failed attempt, redelivered on
 *   the schedule of webhook-schedule.ts until 30 minutes (× timeScale) after the first attempt.
 * - Every event is delivered on its own, with its own schedule, as a provider's queue would: a later event
 *   of a session does not wait while an earlier one is being retried, so the partner can see them out of
 *   order (the `webhook_reorder` fault makes that happen on purpose).
 * - Every event not yet delivered or given up is kept in the store with its schedule (next attempt due,
 *   attempts made, first attempt's time), and each attempt's outcome with it, so a restarted sandbox
 *   (`restore`) goes on delivering: an attempt that came due while it was down is made at once, and the
 *   30-minute deadline still counts from the first attempt. The state an event shows is committed
 *   before any attempt sends it.
 */

export interface WebhookTarget {
  projectId: string;
  url: string;
  enabled: boolean;
}

export interface WebhookEventBody {
  type: string;
  session_info: unknown;
}

export interface WebhookDispatcherOptions {
  serviceKey: KeyObject;
  timeScale: number;
  faults: FaultInjector;
  logger?: FastifyBaseLogger;
  /** where pending deliveries and the delivery log are kept (default: nowhere, in memory only) */
  store?: SandboxStore;
}

/**
 * scheduled: the next attempt is due at dueAtMs; held: the reorder fault holds the event until the
 * next event of its session or dueAtMs; waiting: released, goes out after the next event's first attempt.
 */
type DeliveryPhase = 'scheduled' | 'held' | 'waiting';

/** A delivery as the store keeps it: which event, to whom, and where its attempts stand. */
interface StoredDelivery extends Pick<
  DeliveryRecord,
  'eventId' | 'copy' | 'type' | 'sessionId' | 'projectId' | 'url'
> {
  body: string;
  signature: string;
  firstAttemptAtMs: number | null;
  attempts: number;
  dueAtMs: number;
  phase: DeliveryPhase;
}

/** One copy of one event on its way to the partner. */
interface Delivery extends Omit<StoredDelivery, 'body'> {
  body: Buffer;
  /** called once, when the first attempt has an outcome (the reorder fault waits for it) */
  onFirstOutcome: (() => void) | null;
}

/** An event the reorder fault holds back until the next event of its session has gone out. */
interface HeldEvent {
  deliveries: Delivery[];
  release: () => void;
  timer: NodeJS.Timeout | undefined;
}

/** Oldest records are forgotten beyond this, so a long-running sandbox does not grow without bound. */
const MAX_RECORDS = 50_000;

export class WebhookDispatcher {
  private readonly serviceKey: KeyObject;
  private readonly timeScale: number;
  private readonly faults: FaultInjector;
  private readonly logger: FastifyBaseLogger | undefined;
  private readonly store: SandboxStore;
  private readonly agent: Agent;
  private readonly records: DeliveryRecord[] = [];
  private logSeq = 0;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly inFlight = new Set<AbortController>();
  private readonly held = new Map<string, HeldEvent>();
  private closed = false;

  constructor(opts: WebhookDispatcherOptions) {
    if (!(opts.timeScale > 0)) throw new RangeError('timeScale must be a positive number');
    this.serviceKey = opts.serviceKey;
    this.timeScale = opts.timeScale;
    this.faults = opts.faults;
    this.logger = opts.logger;
    this.store = opts.store ?? new MemoryStore();
    // One keep-alive pool for every partner URL; connect is bounded by the same per-attempt timeout.
    this.agent = new Agent({
      keepAliveTimeout: 10_000,
      connections: 32,
      connect: { timeout: attemptTimeoutMs(this.timeScale) },
    });
    opts.faults.attachDeliveryLog((filter) => this.deliveries(filter));
  }

  /** Schedules delivery of one event to the project's webhook URL. Never throws; delivery is asynchronous. */
  enqueue(target: WebhookTarget, event: WebhookEventBody): void {
    try {
      this.accept(target, event);
    } catch (err) {
      this.logger?.error({ err, type: event?.type }, 'webhook enqueue failed');
    }
  }

  /** Every attempt so far, oldest first; optionally only those of one session. */
  deliveries(filter: { sessionId?: string } = {}): DeliveryRecord[] {
    const all =
      filter.sessionId === undefined
        ? this.records
        : this.records.filter((r) => r.sessionId === filter.sessionId);
    return all.map((r) => ({ ...r }));
  }

  /**
   * Continues the deliveries of an earlier run. `currentUrl` gives a project's webhook URL as configured
   * now (a restarted dev stack may listen elsewhere); without one the stored URL is kept.
   */
  restore(
    saved: { deliveries: Map<string, unknown>; log: readonly unknown[] },
    currentUrl: (projectId: string) => string | undefined,
  ): void {
    for (const doc of saved.log) {
      const { seq, ...record } = doc as DeliveryRecord & { seq: number };
      this.records.push(record);
      this.logSeq = Math.max(this.logSeq, seq);
    }
    const now = Date.now();
    const held = new Map<string, Delivery[]>();
    const stored = [...saved.deliveries.values()] as StoredDelivery[];
    for (const doc of stored.sort((a, b) => a.dueAtMs - b.dueAtMs)) {
      const d: Delivery = {
        ...doc,
        url: currentUrl(doc.projectId) ?? doc.url,
        body: Buffer.from(doc.body, 'utf8'),
        onFirstOutcome: null,
      };
      if (d.phase === 'held' && d.sessionId !== null) {
        held.set(d.sessionId, [...(held.get(d.sessionId) ?? []), d]);
        continue;
      }
      // A waiting event's "next event" went out before the restart: its turn has come.
      this.schedule(d, d.phase === 'waiting' ? 0 : Math.max(0, d.dueAtMs - now));
    }
    for (const [sessionId, deliveries] of held) {
      const holdMs = Math.max(0, Math.min(...deliveries.map((d) => d.dueAtMs)) - now);
      this.hold(sessionId, deliveries, holdMs, () => {
        for (const d of deliveries) this.schedule(d, 0);
      });
    }
  }

  /** Stops every timer and aborts in-flight requests; nothing is sent afterwards (pending deliveries stay stored). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const h of this.held.values()) clearTimeout(h.timer);
    this.held.clear();
    for (const ac of this.inFlight) ac.abort(new Error('webhook dispatcher closed'));
    await this.agent.destroy().catch(() => undefined);
  }

  private accept(target: WebhookTarget, event: WebhookEventBody): void {
    const eventId = `evt_${randomUUID().replace(/-/g, '')}`;
    const sessionId = sessionIdOf(event.session_info);
    const base = {
      eventId,
      copy: 0,
      type: event.type,
      sessionId,
      projectId: target.projectId,
      url: target.url,
    };
    /** Records the event as never attempted: not sent (webhooks off) or dropped (fault). */
    const recordUnsent = (state: 'not_sent' | 'dropped', error: string) =>
      this.record({ ...base, attempt: 0, atMs: Date.now(), durationMs: 0, httpStatus: null, error, state });
    if (!target.enabled) {
      recordUnsent('not_sent', 'webhooks disabled for project');
      return;
    }
    const decision = this.faults.decideWebhook(event.type);
    if (decision.drop) {
      recordUnsent('dropped', 'dropped by fault injection');
      // A held event's "next event" happened, even though it vanished: the held one goes out now.
      if (sessionId !== null) this.takeHeld(sessionId)?.release();
      return;
    }

    const body = Buffer.from(JSON.stringify({ type: event.type, session_info: event.session_info }), 'utf8');
    const signature = sign('sha256', body, this.serviceKey).toString('base64');
    const copies = decision.duplicate ? [0, 1] : [0];
    const deliveries: Delivery[] = copies.map((copy) => ({
      ...base,
      copy,
      body,
      signature,
      firstAttemptAtMs: null,
      attempts: 0,
      dueAtMs: Date.now(),
      phase: 'scheduled',
      onFirstOutcome: null,
    }));
    const start = (afterFirstOutcome?: () => void) => {
      if (afterFirstOutcome) deliveries[0]!.onFirstOutcome = afterFirstOutcome;
      for (const d of deliveries) this.schedule(d, decision.delayMs);
    };

    // A held event of this session goes out after this one, whose first attempt must be seen first.
    const earlier = sessionId === null ? undefined : this.takeHeld(sessionId);
    if (decision.reorder && sessionId !== null) {
      earlier?.release();
      this.hold(sessionId, deliveries, decision.reorder.maxHoldMs ?? GIVE_UP_AFTER_MS * this.timeScale, () =>
        start(),
      );
      return;
    }
    if (earlier) for (const d of earlier.deliveries) this.save(d, 'waiting', d.dueAtMs);
    start(earlier?.release);
  }

  /** The next attempt of `d` in `delayMs` real ms. */
  private schedule(d: Delivery, delayMs: number): void {
    this.save(d, 'scheduled', Date.now() + delayMs);
    this.later(delayMs, () => void this.attempt(d));
  }

  private save(d: Delivery, phase: DeliveryPhase, dueAtMs: number): void {
    d.phase = phase;
    d.dueAtMs = dueAtMs;
    if (!this.store.durable) return;
    const { onFirstOutcome: _callback, body, ...rest } = d;
    const doc: StoredDelivery = { ...rest, body: body.toString('utf8') };
    this.store.put('webhook_deliveries', deliveryKey(d), doc);
  }

  private hold(sessionId: string, deliveries: Delivery[], holdMs: number, release: () => void): void {
    for (const d of deliveries) this.save(d, 'held', Date.now() + holdMs);
    const timer = this.closed
      ? undefined
      : setTimeout(() => {
          this.held.delete(sessionId);
          release();
        }, holdMs);
    timer?.unref();
    this.held.set(sessionId, { deliveries, release, timer });
  }

  private takeHeld(sessionId: string): HeldEvent | undefined {
    const h = this.held.get(sessionId);
    if (!h) return undefined;
    this.held.delete(sessionId);
    clearTimeout(h.timer);
    return h;
  }

  /** Commits the store; false (logged) when it cannot be written. */
  private commit(): boolean {
    try {
      this.store.commit();
      return true;
    } catch (err) {
      this.logger?.error({ err: { message: (err as Error).message } }, 'sandbox store not written');
      return false;
    }
  }

  private async attempt(d: Delivery): Promise<void> {
    if (this.closed) return;
    // The partner acts on what the event says: the state it shows must survive a restart before it goes.
    if (!this.commit()) {
      this.later(attemptTimeoutMs(this.timeScale), () => void this.attempt(d));
      return;
    }
    const startedMs = Date.now();
    d.firstAttemptAtMs ??= startedMs;
    d.attempts += 1;
    const ac = new AbortController();
    const timeout = setTimeout(
      () => ac.abort(new Error(`no answer within ${attemptTimeoutMs(this.timeScale)} ms`)),
      attemptTimeoutMs(this.timeScale),
    );
    timeout.unref();
    this.inFlight.add(ac);
    let httpStatus: number | null = null;
    let error: string | null = null;
    try {
      const res = await request(d.url, {
        method: 'POST',
        body: d.body,
        headers: { 'content-type': 'application/json', 'x-signature': d.signature },
        dispatcher: this.agent,
        signal: ac.signal,
      });
      httpStatus = res.statusCode;
      await res.body.dump();
    } catch (err) {
      error = describeError(ac.signal.aborted ? ac.signal.reason : err);
    } finally {
      clearTimeout(timeout);
      this.inFlight.delete(ac);
    }
    if (this.closed) return;

    const delivered = httpStatus !== null && httpStatus >= 200 && httpStatus < 300;
    const pause = delivered ? null : nextPauseMs(d.attempts, Date.now() - d.firstAttemptAtMs, this.timeScale);
    const state: DeliveryState = delivered ? 'delivered' : pause === null ? 'given_up' : 'retrying';
    if (!delivered && error === null) error = `HTTP ${httpStatus}`;
    this.record({
      ...d,
      attempt: d.attempts,
      atMs: startedMs,
      durationMs: Date.now() - startedMs,
      httpStatus,
      error,
      state,
    });
    if (state === 'given_up')
      this.logger?.warn(
        { eventId: d.eventId, type: d.type, sessionId: d.sessionId, attempts: d.attempts },
        'webhook given up',
      );
    else
      this.logger?.debug(
        { eventId: d.eventId, type: d.type, attempt: d.attempts, httpStatus, error },
        'webhook attempt',
      );
    if (pause !== null) this.schedule(d, pause);
    else this.store.remove('webhook_deliveries', deliveryKey(d));

    const then = d.onFirstOutcome;
    d.onFirstOutcome = null;
    then?.();
    this.commit();
  }

  /** A timer that close() clears and that never keeps the process alive on its own. */
  private later(ms: number, fn: () => void): void {
    if (this.closed) return;
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    t.unref();
    this.timers.add(t);
  }

  private record(r: Omit<DeliveryRecord, 'at'>): void {
    const rec: DeliveryRecord = {
      eventId: r.eventId,
      copy: r.copy,
      type: r.type,
      sessionId: r.sessionId,
      projectId: r.projectId,
      url: r.url,
      attempt: r.attempt,
      at: new Date(r.atMs).toISOString(),
      atMs: r.atMs,
      durationMs: r.durationMs,
      httpStatus: r.httpStatus,
      error: r.error,
      state: r.state,
    };
    this.records.push(rec);
    this.store.append('webhook_log', ++this.logSeq, { seq: this.logSeq, ...rec });
    if (this.records.length > MAX_RECORDS) {
      this.records.splice(0, this.records.length - MAX_RECORDS);
      this.store.trim('webhook_log', this.logSeq - MAX_RECORDS);
    }
  }
}

function deliveryKey(d: { eventId: string; copy: number }): string {
  return `${d.eventId}:${d.copy}`;
}

function sessionIdOf(info: unknown): string | null {
  if (info && typeof info === 'object' && 'id' in info && typeof (info as { id: unknown }).id === 'string')
    return (info as { id: string }).id;
  return null;
}

function describeError(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return typeof code === 'string' ? `${code}: ${err.message}` : err.message;
  }
  return String(err);
}
