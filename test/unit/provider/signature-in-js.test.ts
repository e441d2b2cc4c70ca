/**
 * The provider's signature checked in plain JavaScript (provider/schemas/signature.ts), which workflow
 * code uses for events signed with a key it holds. It must accept what node:crypto accepts for the
 * provider's scheme (else the session asks its worker: slower, still right) and must never accept what
 * node:crypto refuses (that would be a forged event believed).
 */
import { generateKeyPairSync, randomBytes, sign, verify, type KeyObject } from 'node:crypto';
import { RsaSha256Verifier, type RsaPublicNumbers } from '../../../provider/schemas/signature';

function numbersOf(key: KeyObject): RsaPublicNumbers {
  const jwk = key.export({ format: 'jwk' });
  return {
    n: Buffer.from(jwk.n!, 'base64url').toString('hex'),
    e: Number.parseInt(Buffer.from(jwk.e!, 'base64url').toString('hex'), 16),
  };
}

const keys = [
  generateKeyPairSync('rsa', { modulusLength: 2048 }),
  generateKeyPairSync('rsa', { modulusLength: 3072 }),
  generateKeyPairSync('rsa', { modulusLength: 2048, publicExponent: 3 }),
];

describe('RSA SHA-256 signatures checked in plain JavaScript', () => {
  it.each(keys.map((k, i) => [i, k] as const))('key %d: accepts exactly what node:crypto accepts', (_, k) => {
    const v = new RsaSha256Verifier(numbersOf(k.publicKey));
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    for (let i = 0; i < 20; i++) {
      const text = JSON.stringify({ type: 'checkout_results', n: i, note: 'ü€😀', pad: 'x'.repeat(i * 37) });
      const bytes = Buffer.from(text, 'utf8');
      const good = sign('sha256', bytes, k.privateKey);
      expect(v.verify(text, good.toString('base64'))).toBe(true);
      // The body changed, another key, a byte of the signature changed: refused here as by node:crypto.
      const flipped = Buffer.from(good);
      flipped[i % flipped.length]! ^= 1 << (i % 8);
      for (const [t, s] of [
        [`${text} `, good],
        [text, sign('sha256', bytes, other)],
        [text, flipped],
        [text, sign('sha1', bytes, k.privateKey)],
        [text, randomBytes(good.length)],
      ] as const) {
        expect(v.verify(t, s.toString('base64'))).toBe(false);
        expect(verify('sha256', Buffer.from(t, 'utf8'), k.publicKey, s)).toBe(false);
      }
    }
  });

  it('refuses what is not a whole, canonical signature of the key’s length', () => {
    const k = keys[0]!;
    const v = new RsaSha256Verifier(numbersOf(k.publicKey));
    const text = '{"type":"approve_pending"}';
    const good = sign('sha256', Buffer.from(text), k.privateKey);
    const n = Buffer.from(numbersOf(k.publicKey).n, 'hex');
    for (const s of [
      '',
      'AAAA',
      '***',
      good.toString('base64').replace(/=+$/, '') + '=', // padding wrong
      Buffer.concat([Buffer.alloc(1), good]).toString('base64'), // longer than the modulus
      good.subarray(1).toString('base64'), // shorter
      n.toString('base64'), // the modulus itself (s >= n)
    ])
      expect(v.verify(text, s)).toBe(false);
  });

  it('takes no key it cannot use', () => {
    expect(() => new RsaSha256Verifier({ n: 'zz', e: 65537 })).toThrow(TypeError);
    expect(() => new RsaSha256Verifier({ n: 'abcd', e: 1 })).toThrow(TypeError);
  });
});
