/**
 * How events reach backends (DESIGN decision 13): event endpoints, the delivery policy, and the
 * records an outbox keeps (every attempt, per endpoint). Shared by the workflows (the endpoint
 * registry and the per-subject outbox), the activities that sign and send, the API and the HTTP
 * client. Safe for workflow code (no I/O); the signature itself is in common/event-signature.ts.
 */
import type { EventType, PaysagaEvent } from './events';
import type { DeliveryAttempt, EndpointDeliveryView, EventEndpoint } from './event-views';

/** `event-endpoints-<task queue>`: one registry of endpoints per task queue. */
export const eventEndpointsWorkflowId = (taskQueue: string): string => `event-endpoints-${taskQueue}`;
/** `events-<subject>`: the outbox of one session (`ps_...`) or subscription (`sub-...`). */
export const eventOutboxWorkflowId = (subject: string): string => `events-${subject}`;
/** What a subject (session or subscription id) may look like: it becomes part of ids and queries. */
export const EVENT_SUBJECT_PATTERN = /^[A-Za-z0-9_.:-]{1,160}$/;

// The shapes the API shows are zod views (common/event-views.ts); types only here (workflow-safe).
export type { DeliveryAttempt, EventEndpoint } from './event-views';
/** Where an endpoint was registered: by the API, or by a worker's PAYSAGA_EVENT_ENDPOINTS. */
export type EndpointSource = EventEndpoint['source'];

export interface EndpointSecret {
  secret: string;
  /** Absent: the current secret. Set on a secret a rotation replaced: it signs until then. */
  expiresAt?: string;
}

/** What the registry holds per endpoint. Configured endpoints hold no secret: the worker has it. */
export interface EndpointRecord extends EventEndpoint {
  secrets: EndpointSecret[];
}

/** What a delivery reads from the registry at sending time (never carried through an outbox). */
export interface DeliveryTarget {
  id: string;
  url: string;
  source: EndpointSource;
  secrets: EndpointSecret[];
}

/** Does `endpoint` want events of this type? */
export function endpointWants(endpoint: Pick<EventEndpoint, 'events'>, type: EventType): boolean {
  return endpoint.events === null || endpoint.events.includes(type);
}

/** The activity's answer: the attempt, and whether the endpoint is gone (deleted) for good. */
export interface DeliveryOutcome extends DeliveryAttempt {
  gone?: boolean;
}

export type DeliveryStatus = EndpointDeliveryView['status'];

/** An event's delivery to one endpoint: every attempt, in order. */
export interface EndpointDelivery {
  endpointId: string;
  /** pending: being sent or retried; delivered: a 2xx came; failed: no 2xx within the retry window; canceled: the endpoint was deleted. */
  status: DeliveryStatus;
  /** When this round of delivery was queued (the event released, or a redelivery asked for). */
  queuedAt: string;
  /** The latest attempts (at most MAX_ATTEMPTS_KEPT), oldest first. */
  attempts: DeliveryAttempt[];
  /** Every attempt ever made, including those no longer listed. */
  attemptCount: number;
  /** Attempts in the current round (since `queuedAt`): they set the next pause. */
  roundAttempts: number;
  /** While pending: when the next attempt is due (ms since the epoch). */
  nextAttemptAt?: number;
  deliveredAt?: string;
  failedAt?: string;
  /** How many times a redelivery was asked for. */
  redeliveries: number;
}

/** An event an outbox released, with its deliveries. */
export interface EventRecord {
  event: PaysagaEvent;
  /** When the outbox released it for delivery (workflow time, ISO). */
  releasedAt: string;
  /** It arrived after later sequence numbers had been sent (its own had been given up on). */
  late?: boolean;
  deliveries: EndpointDelivery[];
}

export const MAX_ATTEMPTS_KEPT = 100;

/**
 * How long a worker may answer "which endpoints want this event" from the list it last read from the
 * registry (one registry query per worker and interval, not one per released batch). Registering an
 * endpoint answers only after this much more, so an endpoint gets every event released after its
 * registration answered.
 */
export const ENDPOINT_LIST_MAX_AGE_MS = 1_000;

/**
 * How an outbox delivers. Every field is configurable through the worker (PAYSAGA_EVENT_*, see the
 * README); tests shorten the pauses to seconds.
 */
export interface EventDeliveryPolicy {
  /** How long a delivery is retried after it was queued before it is marked failed (default 3 days). */
  retryForMs: number;
  /** Pause after the first failed attempt (default 10 s); each further pause is `factor` times longer... */
  initialRetryMs: number;
  /** ...up to this (default 1 h). */
  maxRetryMs: number;
  factor: number;
  /** Per HTTP attempt, connection to answer (default 10 s). */
  timeoutMs: number;
  /** How long a later sequence number is held back waiting for an earlier one (default 5 min). */
  gapWaitMs: number;
  /** How long an outbox with nothing left to send stays open before it closes (default 1 day). */
  idleMs: number;
  /** Continue-as-new once the outbox's history has this many events (default 5000). */
  maxHistoryEvents: number;
  /** Task queue of the delivery activity (a worker of its own); absent: the outbox's own queue. */
  deliveryTaskQueue?: string;
}

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

export const DEFAULT_EVENT_DELIVERY: EventDeliveryPolicy = {
  retryForMs: 3 * DAY,
  initialRetryMs: 10 * SECOND,
  maxRetryMs: HOUR,
  factor: 2,
  timeoutMs: 10 * SECOND,
  gapWaitMs: 5 * MINUTE,
  idleMs: DAY,
  maxHistoryEvents: 5_000,
};

/** The pause after the `failures`-th failed attempt of a round (1-based), jitter-free. */
export function retryPauseMs(policy: EventDeliveryPolicy, failures: number): number {
  const n = Math.max(1, failures);
  return Math.min(policy.maxRetryMs, policy.initialRetryMs * policy.factor ** (n - 1));
}

/** The default grace period of a rotated secret. */
export const DEFAULT_SECRET_GRACE_MS = DAY;
/** The longest grace period a rotation may ask for. */
export const MAX_SECRET_GRACE_MS = 30 * DAY;
