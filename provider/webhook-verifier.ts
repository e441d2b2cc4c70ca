import type { KeyObject } from 'node:crypto';
import { describeIssue, webhookEvent, type WebhookEvent } from './schemas';
import { loadPublicKey, verifyBytes, type KeyInput } from './signing';

export type WebhookRejectionReason =
  'missing_signature' | 'bad_signature' | 'malformed_json' | 'invalid_event';

export type WebhookVerification =
  | { ok: true; event: WebhookEvent; /** which service key matched (rotation) */ keyIndex: number }
  | { ok: false; reason: WebhookRejectionReason; detail: string };

/**
 * Verifies a webhook over the raw bytes as received, before anything parses them, against one or
 * more service public keys (old and new during a rotation). Keys are parsed once, here.
 */
export function createWebhookVerifier(
  serviceKeys: KeyInput[],
): (raw: Buffer, signature: string | undefined) => WebhookVerification {
  if (serviceKeys.length === 0)
    throw new TypeError('createWebhookVerifier needs at least one service public key');
  const keys: KeyObject[] = serviceKeys.map(loadPublicKey);
  return (raw, signature) => {
    if (!signature)
      return { ok: false, reason: 'missing_signature', detail: 'X-Signature header is missing' };
    const keyIndex = keys.findIndex((k) => verifyBytes(raw, signature, k));
    if (keyIndex < 0)
      return { ok: false, reason: 'bad_signature', detail: 'signature does not verify with any service key' };
    let json: unknown;
    try {
      json = JSON.parse(raw.toString('utf8'));
    } catch {
      return { ok: false, reason: 'malformed_json', detail: 'body is not JSON' };
    }
    const parsed = webhookEvent.safeParse(json);
    if (!parsed.success)
      return { ok: false, reason: 'invalid_event', detail: describeIssue(parsed.error.issues[0]!, json) };
    return { ok: true, event: parsed.data, keyIndex };
  };
}
