import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** A key given as a KeyObject, a PEM string, or a path to a PEM file; parsed once. */
export type KeyInput = KeyObject | string;

/**
 * The smallest RSA modulus accepted for the provider's signatures and the partner's (NIST SP 800-131A:
 * 1024-bit RSA is factorable by a well-funded attacker; 2048 is the floor for signatures today).
 */
export const MIN_RSA_KEY_BITS = 2048;

function pemOf(input: string): string {
  return input.includes('-----BEGIN') ? input : readFileSync(input, 'utf8');
}

/** How an error names a key: what it is, and its file (never the PEM itself). */
function described(name: string, input: KeyInput): string {
  if (typeof input !== 'string') return name;
  return input.includes('-----BEGIN') ? `${name} (inline PEM)` : `${name} (${input})`;
}

/**
 * Refuses a key the provider's scheme (RSA with SHA-256, spec: Authentication rule 2) cannot use safely:
 * one of another type, or an RSA modulus under {@link MIN_RSA_KEY_BITS}. At load, so a process with such
 * a key stops at start, naming it.
 */
export function assertSigningKey(key: KeyObject, name: string): KeyObject {
  if (key.asymmetricKeyType !== 'rsa')
    throw new Error(`${name}: an RSA key is needed, this one is ${key.asymmetricKeyType ?? 'a secret key'}`);
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  if (bits < MIN_RSA_KEY_BITS)
    throw new Error(`${name}: an RSA key of ${bits} bits; at least ${MIN_RSA_KEY_BITS} are required`);
  return key;
}

/** `name` says which key it is in an error (e.g. "partner private key"). */
export function loadPrivateKey(input: KeyInput, name = 'private key'): KeyObject {
  const key = typeof input === 'string' ? createPrivateKey(pemOf(input)) : input;
  return assertSigningKey(key, described(name, input));
}

/** `name` says which key it is in an error (e.g. "provider service key 2"). */
export function loadPublicKey(input: KeyInput, name = 'public key'): KeyObject {
  const key =
    typeof input !== 'string'
      ? input.type === 'private'
        ? createPublicKey(input)
        : input
      : createPublicKey(pemOf(input));
  return assertSigningKey(key, described(name, input));
}

/** RSA SHA-256 over exactly `bytes`, Base64-encoded (spec, Authentication rules 2-3). */
export function signBytes(bytes: Buffer, key: KeyObject): string {
  return sign('sha256', bytes, key).toString('base64');
}

export function verifyBytes(bytes: Buffer, signatureB64: string, key: KeyObject): boolean {
  // Base64 that does not round-trip is not a signature this side made; refuse before the RSA work.
  const sig = Buffer.from(signatureB64, 'base64');
  if (
    sig.length === 0 ||
    sig.toString('base64').replace(/=+$/, '') !== signatureB64.trim().replace(/=+$/, '')
  ) {
    return false;
  }
  return verify('sha256', bytes, key, sig);
}
