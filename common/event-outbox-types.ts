/** What an event outbox (workflows/event-outbox.ts) takes, carries across runs and shows. */
import type { PaysagaEvent } from './events';
import type { EventDeliveryPolicy, EventRecord } from './event-delivery';

export interface OutboxInput {
  /** The session (`ps_...`) or subscription (`sub-...`) id. */
  subject: string;
  /** The delivery policy of the worker that started it (absent: the outbox asks its own worker). */
  policy?: EventDeliveryPolicy;
}

/** Everything a run hands to the next (continue-as-new), and what a closed run returns. */
export interface OutboxState {
  subject: string;
  /**
   * The next sequence number to release in order; null while unknown (a new run whose first event
   * is not 1 and that found no earlier run: it waits `gapWaitMs` for earlier ones, then starts there).
   */
  nextSequence: number | null;
  /** The lowest sequence number whose fate this outbox knows; anything lower is released as late. */
  knownFrom: number;
  /** Sequence numbers given up on (a gap that outlasted `gapWaitMs`): if they come, they go out late. */
  skipped: number[];
  /** Arrived but not released: a lower sequence number is missing. */
  held: PaysagaEvent[];
  /** Workflow time (ms) the current gap began. */
  heldSince?: number;
  /** Released events, oldest first; the oldest finished ones are dropped beyond the outbox's bounds. */
  records: EventRecord[];
  /** Per endpoint, the ids of events still to send there, in order. */
  lanes: Record<string, string[]>;
  /** Redeliveries asked for and not yet queued. */
  redeliveries: { eventId: string; endpointId?: string }[];
  /** Every type ever released (the EventTypes search attribute). */
  types: string[];
  /** The newest `created` released (the LastEventAt search attribute). */
  lastEventAt?: string;
  /** Runs before this one (continue-as-new). */
  runs: number;
}

export type OutboxView = OutboxState;

/** The outbox workflow's signature (workflows/event-outbox.ts), for starting it from below the workflows. */
export type EventOutboxWorkflow = (input: OutboxInput, carried?: OutboxState) => Promise<OutboxState>;
