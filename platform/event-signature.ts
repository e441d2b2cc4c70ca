/**
 * The signature of an outbound event (docs/decisions/013-the-backend-is-told.md), shared by the worker that
 * signs deliveries and the verification helper backends use (client/event-verification.ts):
 *
 *   Paysaga-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>[,v1=...]
 *
 * The HMAC key is the secret string itself (UTF-8, `whsec_` prefix included). One `v1=` per secret
 * that is valid at sending time: during a rotation the new and the old secret both sign.
 * Node only (node:crypto): workflow code must not import this file.
 */
import { createHmac, randomBytes } from 'node:crypto';

export const EVENT_SECRET_PREFIX = 'whsec_';

/** A new endpoint secret: `whsec_` and 32 random bytes, base64url. */
export function generateEventSecret(): string {
  return `${EVENT_SECRET_PREFIX}${randomBytes(32).toString('base64url')}`;
}

/** Hex HMAC-SHA256 of `<t>.<raw body>` with `secret`. */
export function computeEventSignature(secret: string, t: number, rawBody: string | Uint8Array): string {
  return createHmac('sha256', secret)
    .update(`${t}.`)
    .update(typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody)
    .digest('hex');
}

/** The header value for `rawBody` signed at `t` with every secret given (at least one). */
export function eventSignatureHeader(
  rawBody: string | Uint8Array,
  secrets: readonly string[],
  t: number = Math.floor(Date.now() / 1000),
): string {
  if (secrets.length === 0) throw new Error('an event is signed with at least one secret');
  return [`t=${t}`, ...secrets.map((s) => `v1=${computeEventSignature(s, t, rawBody)}`)].join(',');
}

export interface ParsedEventSignature {
  t: number;
  /** Every `v1=` value, lower-case hex. */
  v1: string[];
}

/**
 * `t=...,v1=...` as parts; undefined when it is not such a header (no or a bad `t`, no `v1`).
 * Unknown keys (a future `v2=`) are ignored, so receivers keep working when schemes are added.
 */
export function parseEventSignatureHeader(header: string): ParsedEventSignature | undefined {
  let t: number | undefined;
  const v1: string[] = [];
  for (const part of header.split(',')) {
    const i = part.indexOf('=');
    if (i <= 0) return undefined;
    const key = part.slice(0, i).trim();
    const value = part.slice(i + 1).trim();
    if (key === 't') {
      if (t !== undefined || !/^\d{1,12}$/.test(value)) return undefined;
      t = Number(value);
    } else if (key === 'v1') {
      if (!/^[0-9a-fA-F]{64}$/.test(value)) return undefined;
      v1.push(value.toLowerCase());
    }
  }
  return t !== undefined && v1.length > 0 ? { t, v1 } : undefined;
}
