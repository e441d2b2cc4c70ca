/**
 * Records for accounting, straight from the store (`paysaga export`): sessions, events and refunds of a
 * time window, oldest first, read in pages by a keyset (never OFFSET, never the whole window at once), so
 * an export of any size runs in constant memory and sees a stable order whatever is added meanwhile.
 *
 *   for await (const row of exportRows(store, 'sessions', { from, to })) write(row);
 */
import type { Store } from '../store/database';
import { sessionViewOf } from '../common/session-view';

export const EXPORT_KINDS = ['sessions', 'events', 'refunds'] as const;
export type ExportKind = (typeof EXPORT_KINDS)[number];

/** One flat row: what a spreadsheet takes (CSV) and a JSON line carries. */
export type ExportRow = Record<string, string | number | boolean | null>;

export interface ExportWindow {
  /** Inclusive. */
  from: Date;
  /** Exclusive. */
  to: Date;
  /** Rows per query (default 500). */
  pageSize?: number;
}

/** The columns of each kind, in order (the CSV header). */
export const EXPORT_COLUMNS: Record<ExportKind, readonly string[]> = {
  sessions: [
    'session_id',
    'kind',
    'reference',
    'phase',
    'final',
    'reason',
    'reason_provider_code',
    'reason_detail',
    'needs_attention',
    'currency',
    'amount',
    'held',
    'captured',
    'refunded',
    'charged_back',
    'paid_out',
    'net',
    'customer_id',
    'created_at',
    'final_at',
    'version',
  ],
  events: ['event_id', 'seq', 'type', 'subject', 'sequence', 'created_at', 'data'],
  refunds: [
    'refund_id',
    'session_id',
    'session_reference',
    'status',
    'amount',
    'currency',
    'error',
    'first_seen_at',
    'updated_at',
  ],
};

/** How many rows of `kind` the window holds (the progress bar's total). */
export async function countExport(store: Store, kind: ExportKind, w: ExportWindow): Promise<number> {
  const row =
    kind === 'sessions'
      ? await store.db
          .selectFrom('sessions')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('created_at', '>=', w.from)
          .where('created_at', '<', w.to)
          .executeTakeFirstOrThrow()
      : kind === 'events'
        ? await store.db
            .selectFrom('events')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('created_at', '>=', w.from)
            .where('created_at', '<', w.to)
            .executeTakeFirstOrThrow()
        : await store.db
            .selectFrom('operations')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('kind', '=', 'refund')
            .where('first_seen_at', '>=', w.from)
            .where('first_seen_at', '<', w.to)
            .executeTakeFirstOrThrow();
  return Number(row.n);
}

export function exportRows(store: Store, kind: ExportKind, w: ExportWindow): AsyncGenerator<ExportRow> {
  const pageSize = w.pageSize ?? 500;
  if (kind === 'sessions') return sessionRows(store, w, pageSize);
  if (kind === 'events') return eventRows(store, w, pageSize);
  return refundRows(store, w, pageSize);
}

async function* sessionRows(store: Store, w: ExportWindow, pageSize: number): AsyncGenerator<ExportRow> {
  let after: { createdAt: Date; id: string } | undefined;
  for (;;) {
    let q = store.db
      .selectFrom('sessions')
      .select(['id', 'created_at', 'needs_attention', 'customer_id', 'state'])
      .where('created_at', '>=', w.from)
      .where('created_at', '<', w.to);
    const last = after;
    if (last)
      q = q.where((eb) => eb(eb.refTuple('created_at', 'id'), '>', eb.tuple(last.createdAt, last.id)));
    const page = await q.orderBy('created_at').orderBy('id').limit(pageSize).execute();
    for (const r of page) {
      const v = sessionViewOf(r.state);
      yield {
        session_id: v.sessionId,
        kind: v.kind,
        reference: v.reference,
        phase: v.phase,
        final: v.final,
        reason: v.reason?.code ?? null,
        reason_provider_code: v.reason?.providerCode ?? null,
        reason_detail: v.reason?.detail ?? null,
        needs_attention: r.needs_attention,
        currency: (v.money?.currency ?? v.totals.currency)?.toUpperCase() ?? null,
        amount: v.money?.amount ?? null,
        held: v.totals.held,
        captured: v.totals.captured,
        refunded: v.totals.refunded,
        charged_back: v.totals.chargedBack,
        paid_out: v.totals.paidOut,
        net: v.totals.net,
        customer_id: r.customer_id,
        created_at: v.createdAt,
        final_at: v.finalAt ?? null,
        version: v.version,
      };
    }
    if (page.length < pageSize) return;
    const tail = page[page.length - 1]!;
    after = { createdAt: tail.created_at, id: tail.id };
  }
}

async function* eventRows(store: Store, w: ExportWindow, pageSize: number): AsyncGenerator<ExportRow> {
  let afterSeq = 0;
  for (;;) {
    // Created in the window, in the store's global order (seq), paged on seq.
    const page = await store.db
      .selectFrom('events')
      .select(['seq', 'id', 'type', 'subject', 'sequence', 'created_at', 'data'])
      .where('created_at', '>=', w.from)
      .where('created_at', '<', w.to)
      .where('seq', '>', afterSeq)
      .orderBy('seq')
      .limit(pageSize)
      .execute();
    for (const e of page)
      yield {
        event_id: e.id,
        seq: e.seq,
        type: e.type,
        subject: e.subject,
        sequence: e.sequence,
        created_at: e.created_at.toISOString(),
        data: JSON.stringify(e.data),
      };
    if (page.length < pageSize) return;
    afterSeq = page[page.length - 1]!.seq;
  }
}

/** The provider's refund operations (rf_...), whoever asked for them: what the provider's books hold. */
async function* refundRows(store: Store, w: ExportWindow, pageSize: number): AsyncGenerator<ExportRow> {
  let after: { seen: Date; sessionId: string; id: string } | undefined;
  for (;;) {
    let q = store.db
      .selectFrom('operations')
      .innerJoin('sessions', 'sessions.id', 'operations.session_id')
      .select([
        'operations.id',
        'operations.session_id',
        'sessions.reference',
        'operations.status',
        'operations.amount',
        'operations.currency',
        'operations.error',
        'operations.first_seen_at',
        'operations.updated_at',
      ])
      .where('operations.kind', '=', 'refund')
      .where('operations.first_seen_at', '>=', w.from)
      .where('operations.first_seen_at', '<', w.to);
    const last = after;
    if (last)
      q = q.where((eb) =>
        eb(
          eb.refTuple('operations.first_seen_at', 'operations.session_id', 'operations.id'),
          '>',
          eb.tuple(last.seen, last.sessionId, last.id),
        ),
      );
    const page = await q
      .orderBy('operations.first_seen_at')
      .orderBy('operations.session_id')
      .orderBy('operations.id')
      .limit(pageSize)
      .execute();
    for (const o of page)
      yield {
        refund_id: o.id,
        session_id: o.session_id,
        session_reference: o.reference,
        status: o.status,
        amount: o.amount,
        currency: o.currency?.toUpperCase() ?? null,
        error: o.error,
        first_seen_at: o.first_seen_at.toISOString(),
        updated_at: o.updated_at.toISOString(),
      };
    if (page.length < pageSize) return;
    const tail = page[page.length - 1]!;
    after = { seen: tail.first_seen_at, sessionId: tail.session_id, id: tail.id };
  }
}

/** A CSV field (RFC 4180): quoted when it holds a comma, quote or line break; null is empty. */
export function csvField(value: ExportRow[string]): string {
  if (value === null) return '';
  const s = String(value);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function csvLine(kind: ExportKind, row: ExportRow): string {
  return EXPORT_COLUMNS[kind].map((c) => csvField(row[c] ?? null)).join(',');
}
