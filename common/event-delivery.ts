/**
 * How events reach backends (docs/decisions/013-the-backend-is-told.md): event endpoints and the delivery
 * policy, shared by the worker that delivers (workers/event-dispatcher.ts), the API and the HTTP client. No
 * I/O here; the signature itself is in platform/event-signature.ts.
 */
import type { EventType } from './events';
import type { EventEndpoint } from './event-views';

/** What a subject (session or subscription id) may look like: it becomes part of event ids. */
export const EVENT_SUBJECT_PATTERN = /^[A-Za-z0-9_.:-]{1,160}$/;

// The shapes the API shows are zod views (common/event-views.ts); types only here.
export type { DeliveryAttempt, EventEndpoint } from './event-views';

/** Does `endpoint` want events of this type? */
export function endpointWants(endpoint: Pick<EventEndpoint, 'events'>, type: EventType): boolean {
  return endpoint.events === null || endpoint.events.includes(type);
}

/**
 * How events are delivered. Every field is configurable through the worker (PAYSAGA_EVENT_*, see
 * docs/configuration.md); tests shorten the pauses to seconds.
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
}

const SECOND = 1_000;
const HOUR = 3_600 * SECOND;
const DAY = 24 * HOUR;

export const DEFAULT_EVENT_DELIVERY: EventDeliveryPolicy = {
  retryForMs: 3 * DAY,
  initialRetryMs: 10 * SECOND,
  maxRetryMs: HOUR,
  factor: 2,
  timeoutMs: 10 * SECOND,
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
