import { inspect } from 'node:util';
import { defaultPayloadConverter } from '@temporalio/common';
import { UNENCRYPTED_MARK } from '../../common/message-schemas';
import {
  codecFromEnv,
  CodecKeyError,
  EncryptionCodec,
  ENCRYPTED_ENCODING,
  generateCodecKeySpec,
  parseCodecKeys,
} from '../../platform/codec';

const payload = (v: unknown) => defaultPayloadConverter.toPayload(v)!;

describe('EncryptionCodec', () => {
  const spec = generateCodecKeySpec('k1');
  const codec = new EncryptionCodec(parseCodecKeys(spec));

  it('round-trips payloads and hides their content', async () => {
    const input = [payload({ sessionId: 'ps_1', reference: 'order-secret-42' }), payload(null)];
    const encoded = await codec.encode(input);
    for (const p of encoded) {
      expect(Buffer.from(p.metadata!.encoding!).toString()).toBe(ENCRYPTED_ENCODING);
      expect(Buffer.from(p.data!).toString('latin1')).not.toContain('order-secret-42');
    }
    const decoded = await codec.decode(encoded);
    expect(decoded.map((p) => defaultPayloadConverter.fromPayload(p))).toEqual([
      { sessionId: 'ps_1', reference: 'order-secret-42' },
      null,
    ]);
  });

  it('uses a fresh IV per payload', async () => {
    const [a, b] = await codec.encode([payload('same'), payload('same')]);
    expect(Buffer.from(a!.data!).equals(Buffer.from(b!.data!))).toBe(false);
  });

  it('decrypts with an old key after rotation and encrypts with the new one', async () => {
    const old = await codec.encode([payload('before rotation')]);
    const rotated = new EncryptionCodec(parseCodecKeys(`${generateCodecKeySpec('k2')},${spec}`));
    expect(defaultPayloadConverter.fromPayload((await rotated.decode(old))[0]!)).toBe('before rotation');
    const fresh = await rotated.encode([payload('after')]);
    expect(Buffer.from(fresh[0]!.metadata!['encryption-key-id']!).toString()).toBe('k2');
    await expect(codec.decode(fresh)).rejects.toThrow(
      new Error('payload encrypted with unknown key id "k2"'),
    );
  });

  it('refuses tampered data', async () => {
    const [p] = await codec.encode([payload('amount: 100')]);
    const data = Buffer.from(p!.data!);
    data.writeUInt8(data.readUInt8(20) ^ 1, 20);
    await expect(codec.decode([{ ...p!, data }])).rejects.toThrow();
  });

  it('a payload nobody encrypted: marked for workers, refused by clients, shown by the UI route', async () => {
    const plain = payload({ a: 1 });
    const absent = payload(undefined);
    const [marked, none] = await codec.decode([plain, absent]);
    expect(defaultPayloadConverter.fromPayload(marked!)).toEqual(UNENCRYPTED_MARK);
    expect(none).toEqual(absent); // binary/null carries nothing: it passes
    await expect(codec.withPlain('refuse').decode([plain])).rejects.toThrow(
      new Error(
        'an unencrypted payload (json/plain) where PAYSAGA_CODEC_KEYS requires encryption; PAYSAGA_CODEC_ACCEPT_PLAIN=true lets them pass (docs/configuration.md)',
      ),
    );
    expect(await codec.withPlain('accept').decode([plain])).toEqual([plain]);
    expect(codecFromEnv({ PAYSAGA_CODEC_KEYS: spec }, 'refuse')?.plain).toBe('refuse');
    expect(
      codecFromEnv({ PAYSAGA_CODEC_KEYS: spec, PAYSAGA_CODEC_ACCEPT_PLAIN: 'true' }, 'refuse')?.plain,
    ).toBe('accept');
    expect(() => codecFromEnv({ PAYSAGA_CODEC_KEYS: spec, PAYSAGA_CODEC_ACCEPT_PLAIN: 'yes' })).toThrow(
      new Error('PAYSAGA_CODEC_ACCEPT_PLAIN must be true or false, got yes'),
    );
  });

  it('names what is wrong with a key spec', () => {
    expect(() => parseCodecKeys('')).toThrow(CodecKeyError);
    expect(() => parseCodecKeys('nokey')).toThrow(
      new Error('codec key "nokey…" must look like <id>:<base64 key>'),
    );
    expect(() => parseCodecKeys('k1:AAAA')).toThrow(
      new Error('codec key k1 must be 32 bytes (base64), got 3'),
    );
    expect(() => parseCodecKeys(`${spec},${spec}`)).toThrow(new Error('codec key ids must be unique'));
  });
});

it('never shows its keys in JSON or inspect (the SDK logs worker options at debug level)', () => {
  const spec = generateCodecKeySpec('k1');
  const codec = new EncryptionCodec(parseCodecKeys(spec));
  const secret = spec.split(':')[1]!;
  const raw = Buffer.from(secret, 'base64');
  for (const shown of [JSON.stringify(codec), inspect(codec, { depth: 5 })]) {
    expect(shown).not.toContain(secret);
    expect(shown).not.toContain(raw.toString('hex'));
    expect(shown).not.toMatch(/"data":\[/);
  }
});
