import { createHash } from 'node:crypto';

export const IDEMPOTENCY_KEY_MIN = 4;
export const IDEMPOTENCY_KEY_MAX = 64;

export function isValidIdempotencyKey(key: string): boolean {
  return key.length >= IDEMPOTENCY_KEY_MIN && key.length <= IDEMPOTENCY_KEY_MAX;
}

/**
 * The key of one money-moving step of one workflow: derived from (workflow id, step), never from
 * the attempt, so every retry of the step carries the same key. Readable when it fits in 64
 * characters; otherwise a SHA-256 digest of the same pair.
 */
export function deriveIdempotencyKey(workflowId: string, step: string): string {
  if (!workflowId || !step) throw new TypeError('deriveIdempotencyKey needs a workflow id and a step');
  const readable = `${workflowId}:${step}`;
  if (readable.length <= IDEMPOTENCY_KEY_MAX && readable.length >= IDEMPOTENCY_KEY_MIN) return readable;
  return `h-${createHash('sha256').update(workflowId).update('\0').update(step).digest('base64url')}`;
}

/**
 * The key of a reference's transaction/initiate. The request's fingerprint is part of it, so that a
 * corrected request under a reference whose first request the provider refused is not taken for it.
 */
export const initiateKey = (reference: string, fingerprint: string): string =>
  deriveIdempotencyKey(`ref:${reference}:${fingerprint.slice(0, 12)}`, 'initiate');
/** init/checkout of a reference's session (the session and its payment in one call): the same rule. */
export const initCheckoutKey = (reference: string, fingerprint: string): string =>
  deriveIdempotencyKey(`ref:${reference}:${fingerprint.slice(0, 12)}`, 'init_checkout');
/** init/transfer of a reference's session (the session and its payout in one call): the same rule. */
export const initTransferKey = (reference: string, fingerprint: string): string =>
  deriveIdempotencyKey(`ref:${reference}:${fingerprint.slice(0, 12)}`, 'init_transfer');
