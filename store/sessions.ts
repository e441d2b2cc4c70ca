/**
 * Payment sessions in the store: the session's workflow is their only writer (an activity records each
 * change: forward only by `version`, the change's events in the same transaction); the API, the client,
 * exports and the reconciler read them here, whatever Temporal still keeps.
 */
import { sql } from 'kysely';
import type { PaysagaEvent } from '../common/events';
import type { SessionState } from '../common/session-input';
import type { StoredState } from '../platform/session-runs';
import type { OperationView, ProviderEventRecord } from '../common/views';
import { schemaTable, type Store } from './database';
import { deliveriesQueued, eventInserts, type FanOut } from './events';
import { prepared } from './prepared';
import { storable } from './text';

/** What a search filters on, computed by the writer from the session's view. */
export interface SessionSummary {
  phase: string;
  final: boolean;
  needsAttention: boolean;
  amount?: number;
  currency?: string;
  customerId?: string;
  createdAt: string;
  finalAt?: string;
}

/** One audit entry: a provider event the session received, numbered per session from 1. */
export interface AuditEntry extends ProviderEventRecord {
  seq: number;
  detail?: string;
}

export interface SessionRecord {
  state: SessionState;
  summary: SessionSummary;
  operations: OperationView[];
  /** Audit entries since the last record (a repeat adds nothing). */
  audit: AuditEntry[];
  /** Events announced since the last record (a repeat adds nothing). */
  events: PaysagaEvent[];
}

export interface RecordResult {
  /** The row now holds this version (false: it already held this or a newer one). */
  applied: boolean;
  /** Events that were new. */
  eventsAdded: number;
}

/**
 * Writes a session's change in one transaction: the row (only when `state.version` is newer than the
 * row's), its operations, the new audit entries and the new events with their deliveries. A retried,
 * replayed or reordered write changes nothing it should not.
 */
export async function recordSession(
  store: Store,
  record: SessionRecord,
  fanOut?: FanOut,
): Promise<RecordResult> {
  record = storable(record);
  const { state, summary } = record;
  const now = new Date();
  const operations = record.operations.map((o) => ({
    id: o.id,
    kind: o.kind,
    status: o.status,
    amount: o.amount ?? null,
    currency: o.currency ?? null,
    captured: o.captured ?? null,
    fee: o.fee ?? null,
    error: o.error ?? null,
  }));
  const audit = record.audit.map((a) => ({
    seq: a.seq,
    received_at: a.receivedAt,
    type: a.type,
    via: a.via,
    outcome: a.outcome,
    updated_at: a.updatedAt ?? null,
    detail: a.detail ?? null,
  }));
  const events = record.events.length > 0;
  const table = (name: 'sessions' | 'operations' | 'provider_events') => schemaTable(store.schema, name);
  // One statement: one round trip, and a transaction of its own. The row (forward only by version),
  // its operations when the row took this version, the new audit entries, the new events: each
  // data-modifying part runs once, whether or not the final select reads it.
  const { rows } = await sql<{ applied: number; added: number; queued: number }>`${prepared}
    with session_row as (
      insert into ${table('sessions')} (id, kind, reference, phase, final, needs_attention, amount, currency,
        customer_id, created_at, final_at, updated_at, version, state)
      values (${state.sessionId}, ${state.kind}, ${state.reference}, ${summary.phase}, ${summary.final},
        ${summary.needsAttention}, ${summary.amount ?? null}, ${summary.currency ?? null},
        ${summary.customerId ?? null}, ${summary.createdAt}, ${summary.finalAt ?? null}, ${now},
        ${state.version}, ${JSON.stringify(state)}::jsonb)
      on conflict (id) do update set
        phase = excluded.phase, final = excluded.final, needs_attention = excluded.needs_attention,
        amount = excluded.amount, currency = excluded.currency, customer_id = excluded.customer_id,
        final_at = excluded.final_at, updated_at = excluded.updated_at, version = excluded.version,
        state = excluded.state
      where sessions.version < excluded.version
      returning id
    ),
    session_operations as (
      insert into ${table('operations')} (session_id, id, kind, status, amount, currency, captured, fee, error,
        first_seen_at, updated_at)
      select r.id, o.id, o.kind, o.status, o.amount, o.currency, o.captured, o.fee, o.error, ${now}::timestamptz,
        ${now}::timestamptz
      from session_row r cross join jsonb_to_recordset(${JSON.stringify(operations)}::jsonb)
        as o(id text, kind text, status text, amount bigint, currency text, captured bigint, fee bigint,
          error text)
      on conflict (session_id, id) do update set
        status = excluded.status, amount = excluded.amount, currency = excluded.currency,
        captured = excluded.captured, fee = excluded.fee, error = excluded.error,
        updated_at = excluded.updated_at
    ),
    session_audit as (
      insert into ${table('provider_events')} (session_id, seq, received_at, type, via, outcome, updated_at, detail)
      select ${state.sessionId}, a.seq, a.received_at, a.type, a.via, a.outcome, a.updated_at, a.detail
      from jsonb_to_recordset(${JSON.stringify(audit)}::jsonb)
        as a(seq int, received_at timestamptz, type text, via text, outcome text, updated_at text,
          detail text)
      on conflict (session_id, seq) do nothing
    )${events ? sql`, ${eventInserts(store.schema, record.events, fanOut, 'session_row')}` : sql``}
    select (select count(*) from session_row)::int as applied,
      ${events ? sql`(select count(*) from added_events)::int` : sql`0`} as added,
      ${events ? sql`(select count(*) from added_deliveries)::int` : sql`0`} as queued`.execute(store.db);
  if (rows[0]!.queued > 0) deliveriesQueued.emit('queued');
  return { applied: rows[0]!.applied > 0, eventsAdded: rows[0]!.added };
}

/** The session's last recorded state, or undefined when the store does not know it. */
export async function sessionState(store: Store, sessionId: string): Promise<SessionState | undefined> {
  const { rows } = await sql<{ state: SessionState }>`${prepared}
    select state from ${schemaTable(store.schema, 'sessions')} where id = ${sessionId}`.execute(store.db);
  return rows[0]?.state;
}

/** The store as the source of closed sessions' states (platform/session-runs.ts). */
export const storedStates =
  (store: Store): StoredState =>
  (sessionId) =>
    sessionState(store, sessionId);

/** The audit of a session, oldest first. */
export async function providerEventsOf(store: Store, sessionId: string): Promise<AuditEntry[]> {
  const rows = await store.db
    .selectFrom('provider_events')
    .selectAll()
    .where('session_id', '=', sessionId)
    .orderBy('seq')
    .execute();
  return rows.map((r) => ({
    seq: r.seq,
    receivedAt: r.received_at.toISOString(),
    type: r.type,
    via: r.via as AuditEntry['via'],
    outcome: r.outcome as AuditEntry['outcome'],
    ...(r.updated_at ? { updatedAt: r.updated_at } : {}),
    ...(r.detail ? { detail: r.detail } : {}),
  }));
}

export interface SessionFilter {
  reference?: string;
  phases?: readonly string[];
  kinds?: readonly string[];
  createdFrom?: Date;
  createdTo?: Date;
  amountMin?: number;
  amountMax?: number;
  needsAttention?: boolean;
  customerId?: string;
  final?: boolean;
}

/** Where a page ends: the (created_at, id) of its last row; the next page starts after it. */
export interface SessionCursor {
  createdAt: Date;
  id: string;
}

/** A page of sessions, newest first by (created_at, id): a stable order whatever is added meanwhile. */
export async function searchSessions(
  store: Store,
  filter: SessionFilter,
  page: { after?: SessionCursor; limit: number },
): Promise<SessionState[]> {
  const rows = await sessionSearchQuery(store, filter, page).execute();
  return rows.map((r) => r.state);
}

/** The query searchSessions sends (test/store/indexes.test.ts shows each filter's plan uses an index). */
export function sessionSearchQuery(
  store: Store,
  filter: SessionFilter,
  page: { after?: SessionCursor; limit: number },
) {
  let q = store.db.selectFrom('sessions').select('state');
  if (filter.reference !== undefined) q = q.where('reference', '=', filter.reference);
  if (filter.phases?.length) q = q.where('phase', 'in', [...filter.phases]);
  if (filter.kinds?.length) q = q.where('kind', 'in', [...filter.kinds]);
  if (filter.createdFrom) q = q.where('created_at', '>=', filter.createdFrom);
  if (filter.createdTo) q = q.where('created_at', '<', filter.createdTo);
  if (filter.amountMin !== undefined) q = q.where('amount', '>=', filter.amountMin);
  if (filter.amountMax !== undefined) q = q.where('amount', '<=', filter.amountMax);
  if (filter.needsAttention !== undefined) q = q.where('needs_attention', '=', filter.needsAttention);
  if (filter.customerId !== undefined) q = q.where('customer_id', '=', filter.customerId);
  if (filter.final !== undefined) q = q.where('final', '=', filter.final);
  const after = page.after;
  if (after)
    q = q.where((eb) => eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(after.createdAt, after.id)));
  return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit);
}
