/**
 * For backends that receive paysaga's events: check `Paysaga-Signature` over the raw body before
 * trusting (or even parsing) it. The algorithm, for any language (api/README.md, "Verifying events"):
 *
 *   1. split the header at `,`: one `t=<unix seconds>`, one or more `v1=<hex>` (ignore other keys);
 *   2. expected = hex(HMAC-SHA256(key = secret, message = `<t>` + "." + raw body bytes));
 *   3. accept when some v1 equals the expected value of some secret you hold (compare in constant time);
 *   4. refuse when |now - t| > tolerance (a replay of an old delivery);
 *   5. parse the body; deduplicate by `id` (delivery is at least once); order by `sequence` per subject.
 */
import { timingSafeEqual } from 'node:crypto';
import type { PaysagaEvent } from '../common/events';
import { computeEventSignature, parseEventSignatureHeader } from '../platform/event-signature';

/** Five minutes, as most providers use: enough for clock skew and queueing, short for replays. */
export const DEFAULT_EVENT_TOLERANCE_SEC = 300;

export type EventVerificationReason =
  | 'bad_header' // missing, or not `t=...,v1=...`
  | 'no_matching_signature' // no v1 matches any secret: wrong secret or altered body
  | 'outside_tolerance' // authentic, but signed too long ago (or in the future)
  | 'bad_body'; // authentic, but not a paysaga event

export class PaysagaEventVerificationError extends Error {
  constructor(
    readonly reason: EventVerificationReason,
    message: string,
  ) {
    super(message);
    this.name = 'PaysagaEventVerificationError';
  }
}

/**
 * Returns the event when `header` signs `rawBody` with one of `secrets` within `toleranceSec`;
 * throws PaysagaEventVerificationError saying why not otherwise. `rawBody` must be the bytes as
 * received (not re-serialized JSON). Pass every secret valid for you during a rotation.
 */
export function verifyPaysagaEvent<D = unknown>(
  rawBody: string | Uint8Array,
  header: string | string[] | undefined,
  secrets: string | readonly string[],
  toleranceSec: number = DEFAULT_EVENT_TOLERANCE_SEC,
  nowSec: number = Math.floor(Date.now() / 1000),
): PaysagaEvent<D> {
  const value = Array.isArray(header) ? header.join(',') : header;
  const parsed = value ? parseEventSignatureHeader(value) : undefined;
  if (!parsed)
    throw new PaysagaEventVerificationError(
      'bad_header',
      'Paysaga-Signature is missing or not t=<seconds>,v1=<hex>',
    );
  const keys = (typeof secrets === 'string' ? [secrets] : secrets).filter(Boolean);
  if (keys.length === 0) throw new TypeError('verifyPaysagaEvent needs at least one secret');

  const given = parsed.v1.map((hex) => Buffer.from(hex, 'hex'));
  let match = false;
  for (const secret of keys) {
    const expected = Buffer.from(computeEventSignature(secret, parsed.t, rawBody), 'hex');
    // Every pair is compared (no early exit) so timing says nothing about which one matched.
    for (const g of given) if (g.length === expected.length && timingSafeEqual(g, expected)) match = true;
  }
  if (!match)
    throw new PaysagaEventVerificationError(
      'no_matching_signature',
      'no v1 signature matches: a wrong secret, or the body was altered',
    );
  if (Math.abs(nowSec - parsed.t) > toleranceSec)
    throw new PaysagaEventVerificationError(
      'outside_tolerance',
      `signed at ${parsed.t}, ${Math.abs(nowSec - parsed.t)} s from now (tolerance ${toleranceSec} s): a replay?`,
    );

  let event: unknown;
  try {
    event = JSON.parse(typeof rawBody === 'string' ? rawBody : Buffer.from(rawBody).toString('utf8'));
  } catch {
    throw new PaysagaEventVerificationError('bad_body', 'the signed body is not JSON');
  }
  const e = event as Partial<PaysagaEvent>;
  if (!e || typeof e !== 'object' || typeof e.id !== 'string' || typeof e.type !== 'string')
    throw new PaysagaEventVerificationError('bad_body', 'the signed body is not a paysaga event');
  return event as PaysagaEvent<D>;
}
