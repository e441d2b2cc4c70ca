/**
 * The API's two listeners (docs/decisions/014-two-listeners.md). Public: what the provider and payers must
 * reach, the webhook receiver and the return page, nothing that reads payloads or costs much. Internal
 * (loopback by default): health, metrics, docs, the codec server. The partner API /v1 goes on whichever the
 * deployment chooses (internal by default).
 */
import { isIP } from 'node:net';

export type Listener = 'public' | 'internal';

export interface ListenAddress {
  host: string;
  /** 0: a free one. */
  port: number;
}

export const DEFAULT_PUBLIC: ListenAddress = { host: '127.0.0.1', port: 8080 };
export const DEFAULT_INTERNAL: ListenAddress = { host: '127.0.0.1', port: 8081 };

/** Whether `host` can only be reached from this machine: 127.0.0.0/8, ::1 or `localhost`. */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost') return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (isIP(h) === 6) return h === '::1' || /^::ffff:127\./.test(h);
  return false;
}

export class CodecExposedError extends Error {
  override name = 'CodecExposedError';
}

/**
 * The codec decrypts any payload and encrypts under the production key: without codec tokens it may
 * only listen where nobody else can reach it. Throws otherwise, naming the way out.
 */
export function assertCodecProtected(o: { codec: boolean; tokens: readonly string[]; host: string }): void {
  if (!o.codec || o.tokens.some(Boolean) || isLoopback(o.host)) return;
  throw new CodecExposedError(
    `the codec server (/codec, on with PAYSAGA_CODEC_KEYS) would be open on ${o.host}, which is not ` +
      'loopback: set PAYSAGA_CODEC_TOKENS (bearer tokens the Temporal UI or CLI send), or keep ' +
      'PAYSAGA_INTERNAL_HOST on 127.0.0.1',
  );
}
