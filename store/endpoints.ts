/**
 * Event endpoints in the store. No secret is ever stored: an endpoint row names the master key and the
 * version its secret is derived from (platform/event-secrets.ts); configured endpoints
 * (PAYSAGA_EVENT_ENDPOINTS) keep theirs in the workers' configuration.
 */
import { sql } from 'kysely';
import type { EventEndpoint } from '../common/event-delivery';
import type { Store } from './database';
import type { EventEndpointTable } from './schema';
import { storable } from './text';

type Row = Pick<
  EventEndpointTable,
  'id' | 'url' | 'description' | 'events' | 'source' | 'secret_version' | 'secret_key_id'
> & {
  previous_secrets: { version: number; keyId: string; expiresAt: string }[];
  created_at: Date;
  updated_at: Date;
};

export interface EndpointRecord extends EventEndpoint {
  secretVersion: number;
  secretKeyId: string;
  /** Earlier secrets that still sign until they expire. */
  previous: { version: number; keyId: string; expiresAt: string }[];
}

function recordOf(r: Row): EndpointRecord {
  const live = r.previous_secrets.filter((p) => Date.parse(p.expiresAt) > Date.now());
  const lastExpiry = live
    .map((p) => p.expiresAt)
    .sort()
    .at(-1);
  return {
    id: r.id,
    url: r.url,
    events: (r.events as EventEndpoint['events']) ?? null,
    ...(r.description !== null ? { description: r.description } : {}),
    createdAt: r.created_at.toISOString(),
    source: r.source,
    ...(r.secret_version > 1 ? { secretRotatedAt: r.updated_at.toISOString() } : {}),
    ...(lastExpiry ? { previousSecretExpiresAt: lastExpiry } : {}),
    secretVersion: r.secret_version,
    secretKeyId: r.secret_key_id,
    previous: live,
  };
}

/** The view of an endpoint: never anything a secret is derived from. */
export function endpointView({
  secretVersion: _v,
  secretKeyId: _k,
  previous: _p,
  ...view
}: EndpointRecord): EventEndpoint {
  return view;
}

const COLUMNS = [
  'id',
  'url',
  'description',
  'events',
  'source',
  'secret_version',
  'secret_key_id',
  'previous_secrets',
  'created_at',
  'updated_at',
] as const;

export async function listEndpoints(store: Store): Promise<EndpointRecord[]> {
  const rows = await store.db
    .selectFrom('event_endpoints')
    .select(COLUMNS)
    .where('deleted_at', 'is', null)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(recordOf);
}

export async function countEndpoints(store: Store): Promise<number> {
  const row = await store.db
    .selectFrom('event_endpoints')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('deleted_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function getEndpoint(store: Store, id: string): Promise<EndpointRecord | undefined> {
  const row = await store.db
    .selectFrom('event_endpoints')
    .select(COLUMNS)
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return row ? recordOf(row) : undefined;
}

export async function createEndpoint(
  store: Store,
  e: { id: string; url: string; events: string[] | null; description?: string; keyId: string },
): Promise<EndpointRecord> {
  const row = await store.db
    .insertInto('event_endpoints')
    .values({
      id: e.id,
      url: e.url,
      events: e.events,
      description: e.description !== undefined ? storable(e.description) : null,
      source: 'api',
      secret_version: 1,
      secret_key_id: e.keyId,
      previous_secrets: JSON.stringify([]),
      deleted_at: null,
    })
    .returning(COLUMNS)
    .executeTakeFirstOrThrow();
  return recordOf(row);
}

/** A new secret version; the one it replaces still signs until `graceMs` from now. */
export async function rotateEndpointSecret(
  store: Store,
  id: string,
  o: { keyId: string; graceMs: number },
): Promise<EndpointRecord | undefined> {
  return store.db.transaction().execute(async (tx) => {
    const current = await tx
      .selectFrom('event_endpoints')
      .select(COLUMNS)
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .forUpdate()
      .executeTakeFirst();
    if (!current || current.source !== 'api') return current ? recordOf(current) : undefined;
    const expiresAt = new Date(Date.now() + o.graceMs).toISOString();
    const previous = [
      ...current.previous_secrets.filter((p) => Date.parse(p.expiresAt) > Date.now()),
      ...(o.graceMs > 0
        ? [{ version: current.secret_version, keyId: current.secret_key_id, expiresAt }]
        : []),
    ];
    const row = await tx
      .updateTable('event_endpoints')
      .set({
        secret_version: current.secret_version + 1,
        secret_key_id: o.keyId,
        previous_secrets: JSON.stringify(previous),
        updated_at: sql`now()`,
      })
      .where('id', '=', id)
      .returning(COLUMNS)
      .executeTakeFirstOrThrow();
    return recordOf(row);
  });
}

/** Deletes the endpoint; its pending deliveries are canceled. */
export async function deleteEndpoint(store: Store, id: string): Promise<EndpointRecord | undefined> {
  return store.db.transaction().execute(async (tx) => {
    const row = await tx
      .updateTable('event_endpoints')
      .set({ deleted_at: sql`now()`, updated_at: sql`now()` })
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .returning(COLUMNS)
      .executeTakeFirst();
    if (!row) return undefined;
    await tx
      .updateTable('deliveries')
      .set({ status: 'canceled', finished_at: sql`now()`, lease_until: null })
      .where('endpoint_id', '=', id)
      .where('status', '=', 'pending')
      .execute();
    return recordOf(row);
  });
}

/**
 * Makes the configured endpoints (a worker's PAYSAGA_EVENT_ENDPOINTS) exactly these: added, changed, or
 * deleted when no longer listed. Their secrets stay with the workers.
 */
export async function syncConfiguredEndpoints(
  store: Store,
  configured: { id: string; url: string; events: string[] | null; description?: string }[],
): Promise<void> {
  await store.db.transaction().execute(async (tx) => {
    const ids = configured.map((c) => c.id);
    let gone = tx
      .updateTable('event_endpoints')
      .set({ deleted_at: sql`now()`, updated_at: sql`now()` })
      .where('source', '=', 'config')
      .where('deleted_at', 'is', null);
    if (ids.length) gone = gone.where('id', 'not in', ids);
    await gone.execute();
    for (const c of configured)
      await tx
        .insertInto('event_endpoints')
        .values({
          id: c.id,
          url: c.url,
          events: c.events,
          description: c.description ?? null,
          source: 'config',
          secret_version: 0,
          secret_key_id: 'config',
          previous_secrets: JSON.stringify([]),
          deleted_at: null,
        })
        .onConflict((oc) =>
          oc.column('id').doUpdateSet({
            url: c.url,
            events: c.events,
            description: c.description ?? null,
            source: 'config',
            deleted_at: null,
            updated_at: sql`now()`,
          }),
        )
        .execute();
  });
}
