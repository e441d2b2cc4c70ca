import type { KeyObject } from 'node:crypto';
import { readWebhookEvent, type WebhookEvent } from './schemas';
import { loadPublicKey, verifyBytes, type KeyInput } from './signing';
import { keyFingerprint, type WithdrawnKeys } from './withdrawn-keys';

export type WebhookRejectionReason =
  | 'missing_signature'
  | 'bad_signature'
  | 'withdrawn_key'
  | 'ill_formed_text'
  | 'malformed_json'
  | 'invalid_event';

export type WebhookVerification =
  | {
      ok: true;
      event: WebhookEvent;
      /**
       * The verified bytes as text (strict UTF-8, so encoding it gives exactly those bytes back): what
       * travels to the worker, which verifies and reads the same bytes again.
       */
      body: string;
      /** which service key matched (rotation) */
      keyIndex: number;
    }
  | { ok: false; reason: WebhookRejectionReason; detail: string };

export interface WebhookVerifierOptions {
  /**
   * Keys withdrawn since start (PAYSAGA_WITHDRAWN_KEYS, provider/withdrawn-keys.ts): never believed,
   * whatever the configured list says. While that list cannot be read, every verification throws.
   */
  withdrawn?: WithdrawnKeys;
}

/** Strict UTF-8: a byte sequence that encodes no character throws; a BOM stays in the text (and is no JSON). */
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Verifies a webhook over the raw bytes as received, before anything parses them, against one or
 * more service public keys (old and new during a rotation). Keys are parsed once, here. The bytes are
 * then decoded once, strictly, and parsed once: ill-formed text is refused, so the API and the worker
 * (each verifying the same bytes) read the same event, and the text signaled is exactly those bytes.
 */
export function createWebhookVerifier(
  serviceKeys: KeyInput[],
  o: WebhookVerifierOptions = {},
): (raw: Buffer, signature: string | undefined) => WebhookVerification {
  if (serviceKeys.length === 0)
    throw new TypeError('createWebhookVerifier needs at least one service public key');
  const keys: KeyObject[] = serviceKeys.map((k, i) => loadPublicKey(k, `provider service key ${i + 1}`));
  const fingerprints = keys.map(keyFingerprint);
  const withdrawn = (i: number) => o.withdrawn?.has(fingerprints[i]!) ?? false;
  return (raw, signature) => {
    if (!signature)
      return { ok: false, reason: 'missing_signature', detail: 'X-Signature header is missing' };
    const keyIndex = keys.findIndex((k, i) => !withdrawn(i) && verifyBytes(raw, signature, k));
    if (keyIndex < 0) {
      // Only on the way out: whether a withdrawn key made it, which the operator will want to know.
      const by = keys.findIndex((k, i) => withdrawn(i) && verifyBytes(raw, signature, k));
      if (by >= 0)
        return {
          ok: false,
          reason: 'withdrawn_key',
          detail: `signed with provider service key ${by + 1} (${fingerprints[by]}), withdrawn (${o.withdrawn!.file})`,
        };
      return { ok: false, reason: 'bad_signature', detail: 'signature does not verify with any service key' };
    }
    let body: string;
    try {
      body = UTF8.decode(raw);
    } catch {
      return {
        ok: false,
        reason: 'ill_formed_text',
        detail: 'body: not UTF-8 (a byte sequence that encodes no character)',
      };
    }
    const read = readWebhookEvent(body);
    if (!read.ok) return read;
    return { ok: true, event: read.event, body, keyIndex };
  };
}
