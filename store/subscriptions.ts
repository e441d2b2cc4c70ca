/**
 * Subscriptions in the store (DESIGN decision 15): the subscription's workflow is their only writer. Each
 * change is recorded with its version (a row only moves forward: an older or repeated write changes
 * nothing), its charges, and the events it announced, in one transaction; the API reads subscriptions
 * here, whatever Temporal still keeps of a canceled one.
 */
import type { PaysagaEvent } from '../common/events';
import type { SubscriptionView } from '../common/views';
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
            due_at: null,
            started_at: c.startedAt,
            finished_at: c.finishedAt ?? null,
          })),
        )
        .onConflict((oc) =>
          oc.columns(['subscription_id', 'period', 'attempt']).doUpdateSet((eb) => ({
            session_id: eb.ref('excluded.session_id'),
            outcome: eb.ref('excluded.outcome'),
            reason: eb.ref('excluded.reason'),
            finished_at: eb.ref('excluded.finished_at'),
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
