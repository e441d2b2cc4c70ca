/**
 * Payment sessions in the store: the session's workflow is their only writer (an activity records each
 * change: forward only by `version`, the change's events in the same transaction); the API, the client,
 * exports and the reconciler read them here, whatever Temporal still keeps.
 */
import type { Transaction } from 'kysely';
import type { PaysagaEvent } from '../common/events';
import type { SessionState } from '../common/session-input';
import type { StoredState } from '../platform/session-runs';
import type { OperationView, ProviderEventRecord } from '../common/views';
import type { Store } from './database';
import { appendEvents, eventsAppended, type FanOut } from './events';
import { storable } from './text';
import type { Database } from './schema';

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
  const result = await store.db.transaction().execute(async (tx) => {
    const row = {
      id: state.sessionId,
      kind: state.kind,
      reference: state.reference,
      phase: summary.phase,
      final: summary.final,
      needs_attention: summary.needsAttention,
      amount: summary.amount ?? null,
      currency: summary.currency ?? null,
      customer_id: summary.customerId ?? null,
      created_at: summary.createdAt,
      final_at: summary.finalAt ?? null,
      updated_at: now,
      version: state.version,
      state: JSON.stringify(state),
    };
    const written = await tx
      .insertInto('sessions')
      .values(row)
      .onConflict((oc) =>
        oc
          .column('id')
          .doUpdateSet((eb) => ({
            phase: eb.ref('excluded.phase'),
            final: eb.ref('excluded.final'),
            needs_attention: eb.ref('excluded.needs_attention'),
            amount: eb.ref('excluded.amount'),
            currency: eb.ref('excluded.currency'),
            customer_id: eb.ref('excluded.customer_id'),
            final_at: eb.ref('excluded.final_at'),
            updated_at: eb.ref('excluded.updated_at'),
            version: eb.ref('excluded.version'),
            state: eb.ref('excluded.state'),
          }))
          .where('sessions.version', '<', (eb) => eb.ref('excluded.version')),
      )
      .executeTakeFirst();
    const applied = Number(written.numInsertedOrUpdatedRows ?? 0) > 0;
    if (applied) await writeOperations(tx, state.sessionId, record.operations, now);
    if (record.audit.length)
      await tx
        .insertInto('provider_events')
        .values(
          record.audit.map((a) => ({
            session_id: state.sessionId,
            seq: a.seq,
            received_at: a.receivedAt,
            type: a.type,
            via: a.via,
            outcome: a.outcome,
            updated_at: a.updatedAt ?? null,
            detail: a.detail ?? null,
          })),
        )
        .onConflict((oc) => oc.columns(['session_id', 'seq']).doNothing())
        .execute();
    const added = await appendEvents(tx, record.events, fanOut);
    return { applied, eventsAdded: added.length };
  });
  if (result.eventsAdded > 0) eventsAppended.emit('appended');
  return result;
}

async function writeOperations(
  tx: Transaction<Database>,
  sessionId: string,
  operations: readonly OperationView[],
  now: Date,
): Promise<void> {
  if (operations.length === 0) return;
  await tx
    .insertInto('operations')
    .values(
      operations.map((o) => ({
        session_id: sessionId,
        id: o.id,
        kind: o.kind,
        status: o.status,
        amount: o.amount ?? null,
        currency: o.currency ?? null,
        captured: o.captured ?? null,
        fee: o.fee ?? null,
        error: o.error ?? null,
        first_seen_at: now,
        updated_at: now,
      })),
    )
    .onConflict((oc) =>
      oc.columns(['session_id', 'id']).doUpdateSet((eb) => ({
        status: eb.ref('excluded.status'),
        amount: eb.ref('excluded.amount'),
        currency: eb.ref('excluded.currency'),
        captured: eb.ref('excluded.captured'),
        fee: eb.ref('excluded.fee'),
        error: eb.ref('excluded.error'),
        updated_at: eb.ref('excluded.updated_at'),
      })),
    )
    .execute();
}

/** The session's last recorded state, or undefined when the store does not know it. */
export async function sessionState(store: Store, sessionId: string): Promise<SessionState | undefined> {
  const row = await store.db
    .selectFrom('sessions')
    .select('state')
    .where('id', '=', sessionId)
    .executeTakeFirst();
  return row?.state;
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
