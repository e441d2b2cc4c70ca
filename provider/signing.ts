import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** A key given as a KeyObject, a PEM string, or a path to a PEM file; parsed once. */
export type KeyInput = KeyObject | string;

function pemOf(input: string): string {
  return input.includes('-----BEGIN') ? input : readFileSync(input, 'utf8');
}

export function loadPrivateKey(input: KeyInput): KeyObject {
  if (typeof input !== 'string') return input;
  return createPrivateKey(pemOf(input));
}

export function loadPublicKey(input: KeyInput): KeyObject {
  if (typeof input !== 'string') return input.type === 'private' ? createPublicKey(input) : input;
  return createPublicKey(pemOf(input));
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
