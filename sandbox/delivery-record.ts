/**
 * What the sandbox's webhook dispatcher records of each delivery attempt: its own file because both the
 * dispatcher (which writes it) and the fault injector (which passes the log on to GET /sandbox/webhooks)
 * need the shape, and the dispatcher already imports the injector.
 */

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

/** Reads the delivery log, for one session or all. */
export type DeliveryLog = (filter: { sessionId?: string }) => DeliveryRecord[];
