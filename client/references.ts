/**
 * Opening what a reference asks for, once (docs/decisions/011-paysaga-owns-its-references.md): the reference
 * is claimed in the store (unique); the request holding the claim opens it and binds the reference to it; a
 * repeat of the same request gets what was opened (and makes sure its workflow runs); a repeat arriving while
 * the first is still opening waits for it a moment; another request under the same reference is refused.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { bindReference, claimReference, refuseReference, releaseReference } from '../store/references';
import type { Store } from '../store/database';
import type { ProviderRefusal } from '../common/failures';
import { ReferenceBusyError, ReferenceConflictError } from './errors';

/** How long a request holds a reference it is opening (one that dies lets go after this). */
const LEASE_MS = 60_000;
/** How long a repeat waits for the request that is opening the reference before it answers busy. */
const WAIT_FOR_OPENER_MS = 20_000;

export interface Opening {
  reference: string;
  kind: string;
  fingerprint: string;
  /** Opens it (the provider session, the subscription): returns its id. Runs only while the claim holds. */
  open(): Promise<string>;
  /** Makes sure what the reference opened runs (a repeat after the opener died before starting it). */
  ensure(subjectId: string): Promise<void>;
  /** What the provider refused of `open`, when it refused it for good (the reference is then free again). */
  refusalOf(err: unknown): ProviderRefusal | undefined;
}

export async function openByReference(
  store: Store,
  o: Opening,
): Promise<{ subjectId: string; created: boolean }> {
  const waitUntil = Date.now() + WAIT_FOR_OPENER_MS;
  for (let pause = 100; ; pause = Math.min(pause * 2, 1_000)) {
    const claim = await claimReference(store, { ...o, leaseMs: LEASE_MS });
    switch (claim.status) {
      case 'conflict':
        throw new ReferenceConflictError(
          claim.kind === o.kind
            ? 'already used for another request (a repeat must be the same request)'
            : `already used for a ${claim.kind} (a repeat must be the same request)`,
        );
      case 'open':
        await o.ensure(claim.subjectId);
        return { subjectId: claim.subjectId, created: false };
      case 'claimed': {
        let subjectId: string;
        try {
          subjectId = await o.open();
        } catch (err) {
          const refusal = o.refusalOf(err);
          if (refusal) await refuseReference(store, o.reference, refusal);
          else await releaseReference(store, o.reference, o.fingerprint).catch(() => undefined);
          throw err;
        }
        await bindReference(store, o.reference, subjectId);
        return { subjectId, created: true };
      }
      case 'opening':
        if (Date.now() >= waitUntil) throw new ReferenceBusyError();
        await sleep(Math.min(pause, Math.max(0, waitUntil - Date.now())));
    }
  }
}
