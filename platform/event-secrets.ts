/**
 * Endpoint secrets that are never stored (docs/decisions/013-the-backend-is-told.md): an endpoint's signing
 * secret is derived, where it is needed (the API once when it is made, the worker at each delivery), from a
 * master key and the endpoint's id and secret version. The store holds only which master key and which
 * version; neither the store nor Temporal ever holds a secret.
 *
 *   PAYSAGA_EVENT_SIGNING_KEY  id:base64(32 bytes), comma-separated: the first derives new secrets, every
 *                              one listed derives the secrets made with it (so master keys rotate). When
 *                              unset, keys are derived from PAYSAGA_CODEC_KEYS (HKDF, same ids).
 *
 * Node only (node:crypto).
 */
import { createHmac, hkdfSync } from 'node:crypto';
import { EVENT_SECRET_PREFIX } from './event-signature';

export interface SigningKeys {
  /** The id of the key that derives new secrets. */
  current: string;
  keys: Map<string, Buffer>;
}

const KEY = /^([A-Za-z0-9_-]{1,32}):([A-Za-z0-9+/=_-]+)$/;

/** `id:base64,...` as keys; throws naming the variable and the entry (never the key) when malformed. */
export function parseSigningKeys(value: string, variable: string): SigningKeys {
  const keys = new Map<string, Buffer>();
  let current: string | undefined;
  for (const [i, entry] of value
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)
    .entries()) {
    const m = KEY.exec(entry);
    const bytes = m ? Buffer.from(m[2]!, 'base64') : undefined;
    if (!m || !bytes || bytes.length < 32)
      throw new Error(
        `${variable}[${i}]: an id:base64 entry of at least 32 bytes (id: letters, digits, _ -)`,
      );
    if (keys.has(m[1]!)) throw new Error(`${variable}: the id ${m[1]} is listed twice`);
    keys.set(m[1]!, bytes);
    current ??= m[1]!;
  }
  if (!current) throw new Error(`${variable}: at least one id:base64 key`);
  return { current, keys };
}

/** The signing keys of the environment, or undefined when neither variable is set. */
export function signingKeysFromEnv(env: NodeJS.ProcessEnv): SigningKeys | undefined {
  const own = env.PAYSAGA_EVENT_SIGNING_KEY?.trim();
  if (own) return parseSigningKeys(own, 'PAYSAGA_EVENT_SIGNING_KEY');
  const codec = env.PAYSAGA_CODEC_KEYS?.trim();
  if (!codec) return undefined;
  const parsed = parseSigningKeys(codec, 'PAYSAGA_CODEC_KEYS');
  const derived = new Map<string, Buffer>();
  for (const [id, key] of parsed.keys)
    derived.set(id, Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), 'paysaga event endpoints', 32)));
  return { current: parsed.current, keys: derived };
}

export class MissingSigningKeyError extends Error {
  override name = 'MissingSigningKeyError';
}

/** The secret of version `version` of endpoint `endpointId`, made with master key `keyId`. */
export function deriveEndpointSecret(
  keys: SigningKeys | undefined,
  keyId: string,
  endpointId: string,
  version: number,
): string {
  const key = keys?.keys.get(keyId);
  if (!key)
    throw new MissingSigningKeyError(
      keys
        ? `the signing key ${keyId} of endpoint ${endpointId} is no longer configured (PAYSAGA_EVENT_SIGNING_KEY)`
        : 'no signing key is configured (PAYSAGA_EVENT_SIGNING_KEY or PAYSAGA_CODEC_KEYS)',
    );
  const mac = createHmac('sha256', key).update(`${endpointId}\0${version}`).digest('base64url');
  return `${EVENT_SECRET_PREFIX}${mac}`;
}
