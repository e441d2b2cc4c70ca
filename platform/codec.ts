/**
 * AES-256-GCM payload codec (docs/decisions/002-card-data-never-enters-temporal.md): every payload paysaga
 * puts into Temporal (inputs, results, signals, queries, failures' details) is encrypted at rest in the
 * server. Keys carry ids so they can be rotated: the first key encrypts, all of them decrypt.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import {
  defaultPayloadConverter,
  METADATA_ENCODING_KEY,
  type Payload,
  type PayloadCodec,
} from '@temporalio/common';
import { envFlag } from './env-flag';
import { UNENCRYPTED_MARK } from '../common/message-schemas';
import { temporal } from '@temporalio/proto';

export const ENCRYPTED_ENCODING = 'binary/encrypted';
const KEY_ID = 'encryption-key-id';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export interface CodecKey {
  id: string;
  /** 32 bytes. */
  key: Buffer;
}

export class CodecKeyError extends Error {
  override name = 'CodecKeyError';
}

/** `kid1:<base64 32 bytes>,kid2:<...>`; the first key encrypts. */
export function parseCodecKeys(spec: string): CodecKey[] {
  const keys = spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      const i = entry.indexOf(':');
      if (i <= 0)
        throw new CodecKeyError(`codec key "${entry.slice(0, 8)}…" must look like <id>:<base64 key>`);
      const key = Buffer.from(entry.slice(i + 1), 'base64');
      if (key.length !== 32)
        throw new CodecKeyError(
          `codec key ${entry.slice(0, i)} must be 32 bytes (base64), got ${key.length}`,
        );
      return { id: entry.slice(0, i), key };
    });
  if (keys.length === 0) throw new CodecKeyError('no codec key given');
  if (new Set(keys.map((k) => k.id)).size !== keys.length)
    throw new CodecKeyError('codec key ids must be unique');
  return keys;
}

export function generateCodecKeySpec(id = `k${Date.now().toString(36)}`): string {
  return `${id}:${randomBytes(32).toString('base64')}`;
}

/**
 * What decoding does with a payload that is not encrypted (with keys configured, accepting a plain payload
 * as if paysaga had written it would let anyone reaching the namespace signal):
 *
 *   mark    (workers) it becomes UNENCRYPTED_MARK, which every workflow message's schema refuses
 *           (recorded as refused, never a failed workflow task)
 *   refuse  (the API's client) decoding throws CodecKeyError: an answer nobody encrypted is not read
 *   accept  it passes as it is: the codec route the Temporal UI uses to show any history, and
 *           PAYSAGA_CODEC_ACCEPT_PLAIN=true while histories written before the keys are still replayed
 *
 * `binary/null` payloads (an absent value) carry nothing and always pass.
 */
export type PlainPayloads = 'mark' | 'refuse' | 'accept';

const NULL_ENCODING = 'binary/null';

export class EncryptionCodec implements PayloadCodec {
  // ECMAScript private fields: never in JSON, inspect or the SDK's debug log of worker options.
  readonly #byId: Map<string, Buffer>;
  readonly #active: CodecKey;
  readonly #keys: CodecKey[];

  constructor(
    keys: CodecKey[],
    readonly plain: PlainPayloads = 'mark',
  ) {
    if (keys.length === 0) throw new CodecKeyError('EncryptionCodec needs at least one key');
    this.#keys = keys;
    this.#active = keys[0]!;
    this.#byId = new Map(keys.map((k) => [k.id, k.key]));
  }

  /** The same keys, another way with plain payloads. */
  withPlain(plain: PlainPayloads): EncryptionCodec {
    return plain === this.plain ? this : new EncryptionCodec(this.#keys, plain);
  }

  private unencrypted(p: Payload, encoding: string): Payload {
    if (this.plain === 'accept' || encoding === NULL_ENCODING) return p;
    if (this.plain === 'mark') return defaultPayloadConverter.toPayload(UNENCRYPTED_MARK)!;
    throw new CodecKeyError(
      `an unencrypted payload (${encoding || 'no encoding'}) where PAYSAGA_CODEC_KEYS requires encryption; ` +
        'PAYSAGA_CODEC_ACCEPT_PLAIN=true lets them pass (docs/configuration.md)',
    );
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((p) => {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', this.#active.key, iv);
      const plain = temporal.api.common.v1.Payload.encode(p).finish();
      const data = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
      return {
        metadata: {
          [METADATA_ENCODING_KEY]: Buffer.from(ENCRYPTED_ENCODING),
          [KEY_ID]: Buffer.from(this.#active.id),
        },
        data,
      };
    });
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((p) => {
      const encoding = Buffer.from(p.metadata?.[METADATA_ENCODING_KEY] ?? '').toString();
      if (encoding !== ENCRYPTED_ENCODING) return this.unencrypted(p, encoding);
      const id = Buffer.from(p.metadata?.[KEY_ID] ?? '').toString();
      const key = this.#byId.get(id);
      if (!key) throw new CodecKeyError(`payload encrypted with unknown key id "${id}"`);
      const data = Buffer.from(p.data ?? new Uint8Array());
      const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, IV_BYTES));
      decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
      const plain = Buffer.concat([
        decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)),
        decipher.final(),
      ]);
      return temporal.api.common.v1.Payload.decode(plain) as Payload;
    });
  }
}

/**
 * Outside `paysaga dev` (which makes keys), a worker or API without codec keys would store every
 * payload in Temporal readable by anyone with namespace access: it refuses to start unless
 * PAYSAGA_ALLOW_UNENCRYPTED=true says that is meant.
 */
export function assertCodecConfigured(
  env: NodeJS.ProcessEnv,
  codec: PayloadCodec | undefined,
  who: string,
): void {
  if (codec || envFlag(env, 'PAYSAGA_ALLOW_UNENCRYPTED')) return;
  throw new CodecKeyError(
    `${who}: PAYSAGA_CODEC_KEYS is not set, so payloads would be stored in Temporal unencrypted; give ` +
      'keys (id:base64(32 bytes), e.g. k1:$(openssl rand -base64 32)) or set PAYSAGA_ALLOW_UNENCRYPTED=true',
  );
}

/**
 * From `PAYSAGA_CODEC_KEYS`; without it payloads are not encrypted (say so in the logs). `plain`: what
 * this process does with unencrypted payloads, unless PAYSAGA_CODEC_ACCEPT_PLAIN=true accepts them.
 */
export function codecFromEnv(
  env: NodeJS.ProcessEnv = process.env,
  plain: PlainPayloads = 'mark',
): EncryptionCodec | undefined {
  const accept = envFlag(env, 'PAYSAGA_CODEC_ACCEPT_PLAIN');
  return env.PAYSAGA_CODEC_KEYS
    ? new EncryptionCodec(parseCodecKeys(env.PAYSAGA_CODEC_KEYS), accept ? 'accept' : plain)
    : undefined;
}
