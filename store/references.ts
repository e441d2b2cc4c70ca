/**
 * paysaga's references (docs/decisions/011-paysaga-owns-its-references.md): a reference names one request for
 * as long as the store keeps it, by a unique key, not by a workflow kept open. Opening what a reference asks
 * for (a provider session, a subscription) is done by one request at a time: the first claims the reference
 * with a lease, opens it, and binds it to what it opened; a repeat of the same request finds it bound (or
 * waits while it is being opened); another request under the same reference is refused. A request that dies
 * while opening lets go when its lease ends, and the next repeat opens it (the provider's idempotency key
 * makes that the same provider session).
 */
import { sql } from 'kysely';
import type { ProviderRefusal } from '../common/failures';
import type { Store } from './database';

export type Claim =
  /** This request opens it (it holds the lease until `lease`). */
  | { status: 'claimed' }
  /** Opened before: the subject it opened. */
  | { status: 'open'; subjectId: string; kind: string }
  /** Another request is opening it now (its lease ends at `leaseUntil`). */
  | { status: 'opening'; leaseUntil: Date }
  /** Used by another request (another fingerprint). */
  | { status: 'conflict'; kind: string };

/**
 * Claims `reference` for a request with `fingerprint`: free, refused before (a corrected request may use
 * it again), or left by a request whose lease ran out.
 */
export async function claimReference(
  store: Store,
  r: { reference: string; kind: string; fingerprint: string; leaseMs: number },
): Promise<Claim> {
  const lease = sql<Date>`now() + ${`${r.leaseMs} milliseconds`}::interval`;
  const taken = await store.db
    .insertInto('client_references')
    .values({
      reference: r.reference,
      kind: r.kind,
      fingerprint: r.fingerprint,
      status: 'opening',
      lease_until: lease,
    })
    .onConflict((oc) =>
      oc
        .column('reference')
        .doUpdateSet({
          kind: r.kind,
          fingerprint: r.fingerprint,
          status: 'opening',
          lease_until: lease,
          refusal: null,
          updated_at: sql`now()`,
        })
        .where((eb) =>
          eb.or([
            eb('client_references.status', '=', 'refused'),
            eb.and([
              eb('client_references.status', '=', 'opening'),
              eb('client_references.fingerprint', '=', r.fingerprint),
              eb('client_references.lease_until', '<', sql<Date>`now()`),
            ]),
          ]),
        ),
    )
    .returning('reference')
    .executeTakeFirst();
  if (taken) return { status: 'claimed' };
  const row = await store.db
    .selectFrom('client_references')
    .select(['kind', 'fingerprint', 'status', 'subject_id', 'lease_until'])
    .where('reference', '=', r.reference)
    .executeTakeFirstOrThrow();
  if (row.fingerprint !== r.fingerprint) return { status: 'conflict', kind: row.kind };
  if (row.status === 'open' && row.subject_id)
    return { status: 'open', subjectId: row.subject_id, kind: row.kind };
  return { status: 'opening', leaseUntil: row.lease_until ?? new Date() };
}

/** Binds the reference to what it opened (only the request holding it, or a repeat of it, gets here). */
export async function bindReference(store: Store, reference: string, subjectId: string): Promise<void> {
  await store.db
    .updateTable('client_references')
    .set({ status: 'open', subject_id: subjectId, lease_until: null, updated_at: sql`now()` })
    .where('reference', '=', reference)
    .execute();
}

/** The provider refused what the reference asked for: a corrected request may use it again. */
export async function refuseReference(
  store: Store,
  reference: string,
  refusal: ProviderRefusal,
): Promise<void> {
  await store.db
    .updateTable('client_references')
    .set({ status: 'refused', refusal: JSON.stringify(refusal), lease_until: null, updated_at: sql`now()` })
    .where('reference', '=', reference)
    .where('status', '=', 'opening')
    .execute();
}

/** Gives up the lease early (the request could not finish opening): a repeat may go on at once. */
export async function releaseReference(store: Store, reference: string, fingerprint: string): Promise<void> {
  await store.db
    .updateTable('client_references')
    .set({ lease_until: sql`now()` })
    .where('reference', '=', reference)
    .where('fingerprint', '=', fingerprint)
    .where('status', '=', 'opening')
    .execute();
}

export async function findReference(store: Store, reference: string) {
  return store.db
    .selectFrom('client_references')
    .selectAll()
    .where('reference', '=', reference)
    .executeTakeFirst();
}
