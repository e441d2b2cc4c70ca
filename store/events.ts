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
import { schemaTable, type Store } from './database';
import { storable } from './text';

type Db = Kysely<Database> | Transaction<Database>;

/**
 * Emits `queued` after a transaction of this process that queued deliveries committed: the event
 * dispatcher of this process (workers/event-dispatcher.ts) delivers them at once instead of at its next
 * look. Events no endpoint wants queue nothing and wake no one (with no endpoint configured, as in a
 * fresh `paysaga dev`, the dispatcher would otherwise ask the store for due deliveries after every write).
 */
export const deliveriesQueued = new EventEmitter();
deliveriesQueued.setMaxListeners(0);

/** How long a delivery is tried before it is given up on, from the policy of the writer. */
export interface FanOut {
  retryForMs: number;
}

const DEFAULT_FAN_OUT: FanOut = { retryForMs: 3 * 24 * 3_600_000 };

/**
 * The common table expressions that add the events not stored yet (by id) with their deliveries, for a
 * statement that may do more (store/sessions.ts writes a session's change and its events in one
 * statement: one round trip instead of up to nine). `added_events` lists the rows added.
 *
 * The `counters` row stays locked from its update until the statement's transaction commits, so events
 * become visible in `seq` order. A statement that waited for that lock works from a snapshot
 * taken before the other committed, so an event the other just stored is skipped by `on conflict`
 * (its number is left unused), not by a look. `after` names a part of the same statement whose locks
 * must come first (PostgreSQL runs the parts of one statement in no promised order): every writer then
 * takes its locks in one order, and two writes of one session cannot deadlock.
 */
export function eventInserts(
  schema: string,
  events: readonly PaysagaEvent[],
  fanOut: FanOut = DEFAULT_FAN_OUT,
  after?: string,
) {
  const table = (name: 'counters' | 'events' | 'deliveries' | 'event_endpoints') => schemaTable(schema, name);
  const rows = storable(events).map((e, i) => ({
    ord: i + 1,
    id: e.id,
    subject: e.session_id ?? e.subscription_id!,
    sequence: e.sequence,
    type: e.type,
    created_at: e.created,
    data: e.data,
  }));
  return sql`
    new_events as (
      select * from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
        as e(ord int, id text, subject text, sequence int, type text, created_at timestamptz, data jsonb)
    ),
    event_counter as (
      update ${table('counters')} set value = value + ${rows.length} where name = 'events'
        ${after ? sql`and (select count(*) from ${sql.id(after)}) >= 0` : sql``}
      returning value
    ),
    added_events as (
      insert into ${table('events')} (seq, id, subject, sequence, type, created_at, data)
      select c.value - ${rows.length} + e.ord, e.id, e.subject, e.sequence, e.type, e.created_at, e.data
      from new_events e cross join event_counter c
      on conflict (id) do nothing
      returning seq, id, subject, type
    ),
    -- One pending delivery per (event, endpoint that wants its type), due now.
    added_deliveries as (
      insert into ${table('deliveries')} (event_seq, event_id, subject, endpoint_id, status, next_attempt_at, give_up_at)
      select e.seq, e.id, e.subject, p.id, 'pending', now(),
        now() + ${`${fanOut.retryForMs} milliseconds`}::interval
      from added_events e
      join ${table('event_endpoints')} p on p.deleted_at is null and (p.events is null or e.type = any(p.events))
      returning id
    )`;
}

/**
 * Adds the events not stored yet (by id) with their deliveries: one statement, inside the caller's
 * transaction when given one. Returns the events added (a retried write adds none) and how many
 * deliveries they queued.
 */
export async function appendEvents(
  db: Db,
  schema: string,
  events: readonly PaysagaEvent[],
  fanOut: FanOut = DEFAULT_FAN_OUT,
): Promise<{ added: PaysagaEvent[]; queued: number }> {
  if (events.length === 0) return { added: [], queued: 0 };
  const { rows } = await sql<{ id: string; queued: number }>`
    with ${eventInserts(schema, events, fanOut)}
    select id, (select count(*) from added_deliveries)::int as queued from added_events`.execute(db);
  const added = new Set(rows.map((r) => r.id));
  return { added: events.filter((e) => added.has(e.id)), queued: rows[0]?.queued ?? 0 };
}

/** Stores events (and queues their deliveries) in a statement of their own. */
export async function publishEvents(
  store: Store,
  events: readonly PaysagaEvent[],
  fanOut?: FanOut,
): Promise<PaysagaEvent[]> {
  const { added, queued } = await appendEvents(store.db, store.schema, events, fanOut);
  if (queued > 0) deliveriesQueued.emit('queued');
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
