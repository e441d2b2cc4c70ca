/**
 * Deliveries of events to endpoints, in the store: what is due, who is sending it, every attempt.
 *
 * A lane is (endpoint, subject): its deliveries go one at a time, in the events' order, so a backend
 * hears each session's events in order; lanes are independent, so a dead endpoint or a slow session
 * delays nothing else. A worker takes due lane heads with a lease (`lease_until`); a worker that dies
 * lets go when the lease ends and another sends again (at least once: receivers deduplicate by id).
 */
import { sql } from 'kysely';
import type { DeliveryAttempt } from '../common/event-delivery';
import type { Store } from './database';

export interface DueDelivery {
  id: number;
  eventSeq: number;
  eventId: string;
  endpointId: string;
  /** Attempts before this one (a worker that died while sending counts one with no outcome). */
  attempts: number;
  /** Of those, attempts whose sender died before recording their outcome. */
  lost: number;
  redelivery: boolean;
  giveUpAt: Date;
}

/**
 * Takes up to `limit` due deliveries, each the head of its lane and not leased by another worker, and
 * leases them to `owner` for `leaseMs`.
 */
export async function takeDueDeliveries(
  store: Store,
  o: { owner: string; limit: number; leaseMs: number },
): Promise<DueDelivery[]> {
  if (o.limit <= 0) return [];
  const rows = await store.db
    .updateTable('deliveries')
    .set((eb) => ({
      lease_until: sql<Date>`now() + ${`${o.leaseMs} milliseconds`}::interval`,
      lease_owner: o.owner,
      taken: eb('taken', '+', 1),
    }))
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('deliveries as d')
        .select('d.id')
        .where('d.status', '=', 'pending')
        .where('d.next_attempt_at', '<=', sql<Date>`now()`)
        .where((w) => w.or([w('d.lease_until', 'is', null), w('d.lease_until', '<', sql<Date>`now()`)]))
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom('deliveries as e')
                .select('e.id')
                .where('e.status', '=', 'pending')
                .whereRef('e.endpoint_id', '=', 'd.endpoint_id')
                .whereRef('e.subject', '=', 'd.subject')
                .where((x) =>
                  x.or([
                    x('e.event_seq', '<', x.ref('d.event_seq')),
                    x.and([x('e.event_seq', '=', x.ref('d.event_seq')), x('e.id', '<', x.ref('d.id'))]),
                  ]),
                ),
            ),
          ),
        )
        .orderBy('d.next_attempt_at')
        .orderBy('d.id')
        .limit(o.limit)
        .forUpdate()
        .skipLocked(),
    )
    .returning([
      'id',
      'event_seq',
      'event_id',
      'endpoint_id',
      'attempts',
      'taken',
      'redelivery',
      'give_up_at',
    ])
    .execute();
  return rows.map((r) => ({
    id: r.id,
    eventSeq: r.event_seq,
    eventId: r.event_id,
    endpointId: r.endpoint_id,
    attempts: r.taken - 1,
    lost: r.taken - 1 - r.attempts,
    redelivery: r.redelivery,
    giveUpAt: r.give_up_at,
  }));
}

/**
 * Records an attempt and what follows: delivered, tried again at `retryAt`, failed (past its give-up
 * time) or canceled (the endpoint is gone). Only the lease holder's record counts.
 */
export async function finishAttempt(
  store: Store,
  d: DueDelivery,
  owner: string,
  attempt: DeliveryAttempt,
  next: { status: 'delivered' | 'failed' | 'canceled' } | { status: 'pending'; retryAt: Date },
): Promise<void> {
  await store.db.transaction().execute(async (tx) => {
    const updated = await tx
      .updateTable('deliveries')
      .set({
        status: next.status,
        attempts: d.attempts + 1,
        taken: d.attempts + 1,
        lease_until: null,
        lease_owner: null,
        ...(next.status === 'pending' ? { next_attempt_at: next.retryAt } : { finished_at: sql`now()` }),
      })
      .where('id', '=', d.id)
      .where('lease_owner', '=', owner)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 0) return; // the lease ran out and another worker took it
    const row = (a: DeliveryAttempt) => ({
      delivery_id: d.id,
      event_id: d.eventId,
      endpoint_id: d.endpointId,
      at: a.at,
      status: a.status ?? null,
      error: a.error ?? null,
      latency_ms: a.latencyMs,
      redelivery: d.redelivery,
    });
    // Attempts whose sender died first: sent, perhaps received, no outcome heard.
    const lost = Array.from({ length: d.lost }, () =>
      row({ at: attempt.at, latencyMs: 0, error: 'no outcome heard: the worker sending it stopped' }),
    );
    await tx
      .insertInto('delivery_attempts')
      .values([...lost, row(attempt)])
      .execute();
  });
}

/** Queues the event again to these endpoints (a redelivery), due now. */
export async function queueRedelivery(
  store: Store,
  e: { seq: number; id: string; subject: string },
  endpointIds: readonly string[],
  retryForMs: number,
): Promise<void> {
  if (endpointIds.length === 0) return;
  await store.db
    .insertInto('deliveries')
    .values(
      endpointIds.map((endpointId) => ({
        event_seq: e.seq,
        event_id: e.id,
        subject: e.subject,
        endpoint_id: endpointId,
        status: 'pending' as const,
        next_attempt_at: sql<Date>`now()`,
        give_up_at: sql<Date>`now() + ${`${retryForMs} milliseconds`}::interval`,
        redelivery: true,
      })),
    )
    .execute();
}

export interface DeliveryRow {
  id: number;
  endpointId: string;
  status: 'pending' | 'delivered' | 'failed' | 'canceled';
  attempts: number;
  nextAttemptAt: Date;
  redelivery: boolean;
  createdAt: Date;
  finishedAt: Date | null;
}

/** Every delivery of an event (oldest first) with its attempts (oldest first, the latest `maxAttempts`). */
export async function deliveriesOf(
  store: Store,
  eventId: string,
  maxAttempts = 100,
): Promise<{
  deliveries: DeliveryRow[];
  attempts: (DeliveryAttempt & { deliveryId: number; endpointId: string })[];
}> {
  const rows = await store.db
    .selectFrom('deliveries')
    .select([
      'id',
      'endpoint_id',
      'status',
      'attempts',
      'next_attempt_at',
      'redelivery',
      'created_at',
      'finished_at',
    ])
    .where('event_id', '=', eventId)
    .orderBy('id')
    .execute();
  const attempts = await store.db
    .selectFrom('delivery_attempts')
    .select(['delivery_id', 'endpoint_id', 'at', 'status', 'error', 'latency_ms', 'redelivery'])
    .where('event_id', '=', eventId)
    .orderBy('id', 'desc')
    .limit(maxAttempts * Math.max(1, rows.length))
    .execute();
  return {
    deliveries: rows.map((r) => ({
      id: r.id,
      endpointId: r.endpoint_id,
      status: r.status,
      attempts: r.attempts,
      nextAttemptAt: r.next_attempt_at,
      redelivery: r.redelivery,
      createdAt: r.created_at,
      finishedAt: r.finished_at,
    })),
    attempts: attempts.reverse().map((a) => ({
      deliveryId: a.delivery_id,
      endpointId: a.endpoint_id,
      at: a.at.toISOString(),
      latencyMs: a.latency_ms,
      ...(a.status !== null ? { status: a.status } : {}),
      ...(a.error !== null ? { error: a.error } : {}),
      ...(a.redelivery ? { redelivery: true } : {}),
    })),
  };
}
