import { randomUUID, sign, type KeyObject } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { Agent, request } from 'undici';
import type { FaultInjector } from './faults';
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

/**
 * State of the event after this record:
 * delivered (2xx), retrying (failed, another attempt is scheduled), given_up (failed, no more attempts),
 * dropped (the webhook_drop fault: never sent), not_sent (webhooks are disabled for the project).
 */
export type DeliveryState = 'delivered' | 'retrying' | 'given_up' | 'dropped' | 'not_sent';

/** One attempt to deliver one event (attempt 0 for events that were never sent). */
export interface DeliveryRecord {
  eventId: string;
  /** 0 for the event, 1 for the second copy sent by the webhook_duplicate fault */
  copy: number;
  type: string;
  sessionId: string | null;
  projectId: string;
  url: string;
  attempt: number;
  /** when the attempt started (ISO), or when the event was dropped / not sent */
  at: string;
  atMs: number;
  durationMs: number;
  httpStatus: number | null;
  error: string | null;
  state: DeliveryState;
}

export interface WebhookDispatcherOptions {
  serviceKey: KeyObject;
  timeScale: number;
  faults: FaultInjector;
  logger?: FastifyBaseLogger;
}

/** One copy of one event on its way to the partner. */
interface Delivery {
  eventId: string;
  copy: number;
  target: WebhookTarget;
  type: string;
  sessionId: string | null;
  projectId: string;
  url: string;
  body: Buffer;
  signature: string;
  firstAttemptAtMs: number | null;
  attempts: number;
  /** called once, when the first attempt has an outcome (the reorder fault waits for it) */
  onFirstOutcome: (() => void) | null;
}

/** An event the reorder fault holds back until the next event of its session has gone out. */
interface HeldEvent {
  release: () => void;
  timer: NodeJS.Timeout;
}

/** Oldest records are forgotten beyond this, so a long-running sandbox does not grow without bound. */
const MAX_RECORDS = 50_000;

export class WebhookDispatcher {
  private readonly serviceKey: KeyObject;
  private readonly timeScale: number;
  private readonly faults: FaultInjector;
  private readonly logger: FastifyBaseLogger | undefined;
  private readonly agent: Agent;
  private readonly records: DeliveryRecord[] = [];
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

  /** Stops every timer and aborts in-flight requests; nothing is sent afterwards. */
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
    if (this.closed) return;
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
      if (sessionId !== null) this.takeHeld(sessionId)?.();
      return;
    }

    const body = Buffer.from(JSON.stringify({ type: event.type, session_info: event.session_info }), 'utf8');
    const signature = sign('sha256', body, this.serviceKey).toString('base64');
    const copies = decision.duplicate ? [0, 1] : [0];
    const deliveries: Delivery[] = copies.map((copy) => ({
      ...base,
      copy,
      target,
      body,
      signature,
      firstAttemptAtMs: null,
      attempts: 0,
      onFirstOutcome: null,
    }));
    const start = (afterFirstOutcome?: () => void) => {
      if (afterFirstOutcome) deliveries[0]!.onFirstOutcome = afterFirstOutcome;
      for (const d of deliveries) this.later(decision.delayMs, () => void this.attempt(d));
    };

    // A held event of this session goes out after this one, whose first attempt must be seen first.
    const earlier = sessionId === null ? undefined : this.takeHeld(sessionId);
    if (decision.reorder && sessionId !== null) {
      earlier?.();
      this.hold(sessionId, decision.reorder.maxHoldMs, () => start());
      return;
    }
    start(earlier);
  }

  private hold(sessionId: string, maxHoldMs: number | null, release: () => void): void {
    const holdMs = maxHoldMs ?? GIVE_UP_AFTER_MS * this.timeScale;
    const timer = setTimeout(() => {
      this.held.delete(sessionId);
      release();
    }, holdMs);
    timer.unref();
    this.held.set(sessionId, { release, timer });
  }

  private takeHeld(sessionId: string): (() => void) | undefined {
    const h = this.held.get(sessionId);
    if (!h) return undefined;
    this.held.delete(sessionId);
    clearTimeout(h.timer);
    return h.release;
  }

  private async attempt(d: Delivery): Promise<void> {
    if (this.closed) return;
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
      const res = await request(d.target.url, {
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
    if (pause !== null) this.later(pause, () => void this.attempt(d));

    const then = d.onFirstOutcome;
    d.onFirstOutcome = null;
    then?.();
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
    if (this.records.length > MAX_RECORDS) this.records.splice(0, this.records.length - MAX_RECORDS);
  }
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
