/**
 * The events told to backends, kept for as long as the store keeps them (the transactional outbox):
 * written in the same transaction as the change they describe (store/sessions.ts, store/subscriptions.ts),
 * each with a global order `seq` that is the cursor of every feed, and fanned out at once into one
 * pending delivery per endpoint that wants its type.
 *
 * The global order: a transaction that adds events takes the next numbers from the `events` counter row,
 * and that row stays locked until it commits; so rows become visible in `seq` order, and a reader paging
 * by `seq` never skips one that commits later with a smaller number.
 */
import { EventEmitter } from 'node:events';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { PaysagaEvent } from '../common/events';
import type { Database } from './schema';
import type { Store } from './database';
import { storable } from './text';

type Db = Kysely<Database> | Transaction<Database>;

/**
 * Emits `appended` after a transaction of this process that added events committed: the event
 * dispatcher of this process (workers/event-dispatcher.ts) delivers them at once instead of at its next
 * look.
 */
export const eventsAppended = new EventEmitter();
eventsAppended.setMaxListeners(0);

/** How long a delivery is tried before it is given up on, from the policy of the writer. */
export interface FanOut {
  retryForMs: number;
}

const DEFAULT_FAN_OUT: FanOut = { retryForMs: 3 * 24 * 3_600_000 };

/**
 * Adds the events not stored yet (by id) with their deliveries, inside the caller's transaction.
 * Returns the events added (a retried write adds none).
 */
export async function appendEvents(
  tx: Transaction<Database>,
  events: readonly PaysagaEvent[],
  fanOut: FanOut = DEFAULT_FAN_OUT,
): Promise<PaysagaEvent[]> {
  if (events.length === 0) return [];
  // Taken first: every transaction adding events waits here for the one before it to commit.
  const counter = await tx
    .updateTable('counters')
    .set((eb) => ({ value: eb('value', '+', events.length) }))
    .where('name', '=', 'events')
    .returning('value')
    .executeTakeFirstOrThrow();
  const known = new Set(
    (
      await tx
        .selectFrom('events')
        .select('id')
        .where(
          'id',
          'in',
          events.map((e) => e.id),
        )
        .execute()
    ).map((r) => r.id),
  );
  const fresh = storable(events.filter((e) => !known.has(e.id)));
  if (fresh.length === 0) return [];
  const first = counter.value - events.length + 1;
  const rows = fresh.map((e, i) => ({
    seq: first + i,
    id: e.id,
    subject: e.session_id ?? e.subscription_id!,
    sequence: e.sequence,
    type: e.type,
    created_at: e.created,
    data: JSON.stringify(e.data),
  }));
  await tx.insertInto('events').values(rows).execute();
  // One pending delivery per (event, endpoint that wants its type), due now.
  await tx
    .insertInto('deliveries')
    .columns(['event_seq', 'event_id', 'subject', 'endpoint_id', 'status', 'next_attempt_at', 'give_up_at'])
    .expression((eb) =>
      eb
        .selectFrom('events as e')
        .innerJoin('event_endpoints as p', (join) =>
          join
            .on('p.deleted_at', 'is', null)
            .on((on) => on.or([on('p.events', 'is', null), sql<boolean>`e.type = any(p.events)`])),
        )
        .select([
          'e.seq',
          'e.id',
          'e.subject',
          'p.id as endpoint_id',
          sql.lit('pending').as('status'),
          sql<Date>`now()`.as('next_attempt_at'),
          sql<Date>`now() + ${`${fanOut.retryForMs} milliseconds`}::interval`.as('give_up_at'),
        ])
        .where('e.seq', '>=', first)
        .where('e.seq', '<=', counter.value),
    )
    .execute();
  return fresh;
}

/** Stores events (and queues their deliveries) in a transaction of their own. */
export async function publishEvents(
  store: Store,
  events: readonly PaysagaEvent[],
  fanOut?: FanOut,
): Promise<PaysagaEvent[]> {
  const added = await store.db.transaction().execute((tx) => appendEvents(tx, events, fanOut));
  if (added.length > 0) eventsAppended.emit('appended');
  return added;
}

export type StoredEvent = PaysagaEvent & { seq: number };

interface EventRow {
  seq: number;
  id: string;
  type: string;
  subject: string;
  sequence: number;
  created_at: Date;
  data: Record<string, unknown>;
}

export function eventOfRow(row: EventRow): StoredEvent {
  const subject = row.subject.startsWith('ps_')
    ? { session_id: row.subject }
    : { subscription_id: row.subject };
  return {
    id: row.id,
    type: row.type as PaysagaEvent['type'],
    created: row.created_at.toISOString(),
    ...subject,
    sequence: row.sequence,
    data: row.data,
    seq: row.seq,
  } as StoredEvent;
}

export async function getEvent(store: Store, id: string): Promise<StoredEvent | undefined> {
  const row = await store.db.selectFrom('events').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? eventOfRow(row) : undefined;
}

export interface EventQuery {
  subject?: string;
  types?: readonly string[];
  /** Events after this global position (older first), or before it (newer first). */
  after?: number;
  before?: number;
  createdFrom?: Date;
  createdTo?: Date;
  /** Oldest first (default) or newest first. */
  order?: 'asc' | 'desc';
  limit: number;
}

/** A page of events by global order, filtered; each filter has its index (events_type, events_created). */
export async function listEvents(db: Db, q: EventQuery): Promise<StoredEvent[]> {
  const rows = await eventListQuery(db, q).execute();
  return rows.map(eventOfRow);
}

/** The query listEvents sends (test/store/indexes.test.ts shows its plan uses an index). */
export function eventListQuery(db: Db, q: EventQuery) {
  let query = db.selectFrom('events').selectAll();
  if (q.subject !== undefined) query = query.where('subject', '=', q.subject);
  if (q.types?.length) query = query.where('type', 'in', [...q.types]);
  if (q.after !== undefined) query = query.where('seq', '>', q.after);
  if (q.before !== undefined) query = query.where('seq', '<', q.before);
  if (q.createdFrom) query = query.where('created_at', '>=', q.createdFrom);
  if (q.createdTo) query = query.where('created_at', '<', q.createdTo);
  return query.orderBy('seq', q.order ?? 'asc').limit(q.limit);
}

/** The seq of an event id (a cursor given as an id), or undefined. */
export async function seqOfEvent(store: Store, id: string): Promise<number | undefined> {
  const row = await store.db.selectFrom('events').select('seq').where('id', '=', id).executeTakeFirst();
  return row?.seq;
}
