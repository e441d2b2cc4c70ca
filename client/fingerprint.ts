/**
 * The fingerprint of a creating request: the same request always gives the same digest, so that a repeat
 * under a reference is told from another request under it
 * (docs/decisions/011-paysaga-owns-its-references.md). Card data is never part of it (not even hashed: a
 * PAN's hash is easily reversed); a card counts as its BIN, last 4 and expiry.
 */
import { createHash } from 'node:crypto';
import { isSensitiveCard } from '../provider/schemas/card';

function canonical(v: unknown): unknown {
  if (isSensitiveCard(v)) return v.toJSON();
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
        .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
    );
  return v;
}

/** SHA-256 (hex) of the request as JSON with sorted keys and cards masked. */
export function requestFingerprint(value: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify(canonical(value)))
    .digest('hex');
}
