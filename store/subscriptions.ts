/**
 * Subscriptions in the store: the subscription's workflow is their only writer. Each change is recorded
 * with its version (a row only moves forward: an older or repeated write changes nothing), its billing
 * periods, its charges, and the events it announced, in one transaction; the API reads subscriptions
 * here, whatever Temporal still keeps of a finished one. The periods are the money record: every period
 * ever taken stays (the workflow carries only the recent and open ones).
 */
import type { PaysagaEvent } from '../common/events';
import type { PeriodStatus } from '../common/billing-policy';
import type { PeriodPage, StoredCharge, StoredPeriod, SubscriptionView } from '../common/views';
import type { Store } from './database';
import { appendEvents, deliveriesQueued, type FanOut } from './events';
import { storable } from './text';
import type { RecordResult, SessionCursor } from './sessions';

export interface SubscriptionRecord {
  view: SubscriptionView;
  /** Grows with every change the workflow records (carried across its runs). */
  version: number;
  customerId?: string;
  /** Events announced and not confirmed stored yet, oldest first (a repeat adds nothing). */
  events: PaysagaEvent[];
}

/** Writes a subscription's change, its charges and its new events in one transaction. */
export async function recordSubscription(
  store: Store,
  record: SubscriptionRecord,
  fanOut?: FanOut,
): Promise<RecordResult> {
  record = storable(record);
  const { view } = record;
  const now = new Date();
  const result = await store.db.transaction().execute(async (tx) => {
    const written = await tx
      .insertInto('subscriptions')
      .values({
        id: view.subscriptionId,
        reference: view.reference,
        status: view.status,
        needs_attention: view.attention !== undefined,
        amount: view.amount.amount,
        currency: view.amount.currency,
        customer_id: record.customerId ?? null,
        next_charge_at: view.nextChargeAt ?? null,
        created_at: view.createdAt,
        updated_at: now,
        version: record.version,
        state: JSON.stringify(view),
      })
      .onConflict((oc) =>
        oc
          .column('id')
          .doUpdateSet((eb) => ({
            status: eb.ref('excluded.status'),
            needs_attention: eb.ref('excluded.needs_attention'),
            amount: eb.ref('excluded.amount'),
            currency: eb.ref('excluded.currency'),
            customer_id: eb.ref('excluded.customer_id'),
            next_charge_at: eb.ref('excluded.next_charge_at'),
            updated_at: eb.ref('excluded.updated_at'),
            version: eb.ref('excluded.version'),
            state: eb.ref('excluded.state'),
          }))
          .where('subscriptions.version', '<', (eb) => eb.ref('excluded.version')),
      )
      .executeTakeFirst();
    const applied = Number(written.numInsertedOrUpdatedRows ?? 0) > 0;
    if (applied && view.charges.length > 0)
      await tx
        .insertInto('subscription_charges')
        .values(
          view.charges.map((c) => ({
            subscription_id: view.subscriptionId,
            period: c.period,
            attempt: c.attempt,
            session_id: c.sessionId || null,
            amount: c.amount,
            currency: c.currency,
            outcome: c.outcome,
            reason: c.reason?.code ?? null,
            due_at: c.dueAt,
            started_at: c.startedAt,
            finished_at: c.finishedAt ?? null,
            kind: c.kind,
            reference: c.reference,
            decline_class: c.declineClass ?? null,
          })),
        )
        .onConflict((oc) =>
          oc.columns(['subscription_id', 'period', 'attempt']).doUpdateSet((eb) => ({
            session_id: eb.ref('excluded.session_id'),
            outcome: eb.ref('excluded.outcome'),
            reason: eb.ref('excluded.reason'),
            finished_at: eb.ref('excluded.finished_at'),
            decline_class: eb.ref('excluded.decline_class'),
          })),
        )
        .execute();
    if (applied && view.periods.length > 0)
      await tx
        .insertInto('subscription_periods')
        .values(
          view.periods.map((p) => ({
            subscription_id: view.subscriptionId,
            period: p.period,
            due_at: p.dueAt,
            amount: p.amount,
            currency: p.currency,
            adjustment: p.adjustment ?? null,
            status: p.status,
            attempts: p.attempts,
            paid_at: p.paidAt ?? null,
            paid_by: p.paidBy ?? null,
            owed_since: p.owedSince ?? null,
            written_off_at: p.writtenOffAt ?? null,
            write_off_reason: p.writeOffReason ?? null,
            reason: p.lastReason?.code ?? null,
            decline_class: p.declineClass ?? null,
            updated_at: now,
          })),
        )
        .onConflict((oc) =>
          oc.columns(['subscription_id', 'period']).doUpdateSet((eb) => ({
            status: eb.ref('excluded.status'),
            attempts: eb.ref('excluded.attempts'),
            paid_at: eb.ref('excluded.paid_at'),
            paid_by: eb.ref('excluded.paid_by'),
            owed_since: eb.ref('excluded.owed_since'),
            written_off_at: eb.ref('excluded.written_off_at'),
            write_off_reason: eb.ref('excluded.write_off_reason'),
            reason: eb.ref('excluded.reason'),
            decline_class: eb.ref('excluded.decline_class'),
            updated_at: eb.ref('excluded.updated_at'),
          })),
        )
        .execute();
    const { added, queued } = await appendEvents(tx, store.schema, record.events, fanOut);
    return { applied, eventsAdded: added.length, queued };
  });
  if (result.queued > 0) deliveriesQueued.emit('queued');
  return { applied: result.applied, eventsAdded: result.eventsAdded };
}

/** The subscription as last recorded, or undefined when the store does not know it. */
export async function storedSubscription(
  store: Store,
  subscriptionId: string,
): Promise<SubscriptionView | undefined> {
  const row = await store.db
    .selectFrom('subscriptions')
    .select('state')
    .where('id', '=', subscriptionId)
    .executeTakeFirst();
  return row ? (row.state as SubscriptionView) : undefined;
}

export interface SubscriptionFilter {
  reference?: string;
  statuses?: readonly string[];
  createdFrom?: Date;
  createdTo?: Date;
}

/** A page of subscriptions, newest first by (created_at, id). */
export async function searchSubscriptions(
  store: Store,
  filter: SubscriptionFilter,
  page: { after?: SessionCursor; limit: number },
): Promise<SubscriptionView[]> {
  let q = store.db.selectFrom('subscriptions').select('state');
  if (filter.reference !== undefined) q = q.where('reference', '=', filter.reference);
  if (filter.statuses?.length) q = q.where('status', 'in', [...filter.statuses]);
  if (filter.createdFrom) q = q.where('created_at', '>=', filter.createdFrom);
  if (filter.createdTo) q = q.where('created_at', '<', filter.createdTo);
  const after = page.after;
  if (after)
    q = q.where((eb) => eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(after.createdAt, after.id)));
  const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit).execute();
  return rows.map((r) => r.state as SubscriptionView);
}

export interface PeriodQuery {
  status?: PeriodStatus;
  /** Periods after this number (the `next` of the page before). */
  after?: number;
  limit?: number;
}

const PERIOD_PAGE = { default: 100, max: 500 } as const;

/** A subscription's periods by number, each with its attempts; `status` filters (`owed`: what is owed). */
export async function storedPeriods(
  store: Store,
  subscriptionId: string,
  query: PeriodQuery = {},
): Promise<PeriodPage> {
  const limit = Math.min(Math.max(1, query.limit ?? PERIOD_PAGE.default), PERIOD_PAGE.max);
  let q = store.db
    .selectFrom('subscription_periods')
    .selectAll()
    .where('subscription_id', '=', subscriptionId);
  if (query.status) q = q.where('status', '=', query.status);
  if (query.after !== undefined) q = q.where('period', '>', query.after);
  const rows = await q
    .orderBy('period')
    .limit(limit + 1)
    .execute();
  const page = rows.slice(0, limit);
  const numbers = page.map((r) => r.period);
  const charges = numbers.length
    ? await store.db
        .selectFrom('subscription_charges')
        .selectAll()
        .where('subscription_id', '=', subscriptionId)
        .where('period', 'in', numbers)
        .orderBy('period')
        .orderBy('attempt')
        .execute()
    : [];
  const time = (t: Date | string | null) => (t === null ? undefined : new Date(t).toISOString());
  const periods = page.map((r): StoredPeriod => {
    const paidAt = time(r.paid_at);
    const owedSince = time(r.owed_since);
    const writtenOffAt = time(r.written_off_at);
    return {
      period: r.period,
      dueAt: time(r.due_at)!,
      amount: Number(r.amount),
      currency: r.currency,
      ...(r.adjustment !== null ? { adjustment: Number(r.adjustment) } : {}),
      status: r.status as PeriodStatus,
      attempts: r.attempts,
      ...(paidAt ? { paidAt } : {}),
      ...(r.paid_by ? { paidBy: r.paid_by } : {}),
      ...(owedSince ? { owedSince } : {}),
      ...(writtenOffAt ? { writtenOffAt } : {}),
      ...(r.write_off_reason ? { writeOffReason: r.write_off_reason } : {}),
      ...(r.decline_class ? { declineClass: r.decline_class as StoredPeriod['declineClass'] } : {}),
      charges: charges
        .filter((c) => c.period === r.period)
        .map((c) => {
          const finishedAt = time(c.finished_at);
          return {
            attempt: c.attempt,
            kind: c.kind as StoredCharge['kind'],
            sessionId: c.session_id ?? '',
            reference: c.reference ?? '',
            amount: Number(c.amount),
            currency: c.currency,
            startedAt: time(c.started_at)!,
            outcome: c.outcome as StoredCharge['outcome'],
            ...(finishedAt ? { finishedAt } : {}),
            ...(c.reason ? { reasonCode: c.reason as StoredCharge['reasonCode'] } : {}),
            ...(c.decline_class ? { declineClass: c.decline_class as StoredCharge['declineClass'] } : {}),
          };
        }),
    };
  });
  const hasMore = rows.length > limit;
  return { periods, hasMore, ...(hasMore ? { next: numbers.at(-1)! } : {}) };
}
