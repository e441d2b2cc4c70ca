/**
 * Identity checks by reference: sbp/identity_check takes no idempotency key, so the reference is held
 * by an intake workflow of its own (PaymentsClient.startIdentityCheck, workflows/identity-check.ts).
 */
import { createHash } from 'node:crypto';

/** The id of the intake workflow of an identity check: the caller's reference is the lock. */
export function identityCheckIntakeId(reference: string): string {
  return `identity-check-${reference}`;
}

/** SHA-256 of the request as JSON with sorted keys: the same request always gives the same digest. */
export function requestFingerprint(value: unknown): string {
  const sorted = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sorted)
      : v && typeof v === 'object'
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, sorted((v as Record<string, unknown>)[k])]),
          )
        : v;
  return createHash('sha256')
    .update(JSON.stringify(sorted(value)))
    .digest('hex');
}
