/**
 * Project Wycheproof's RSASSA-PKCS1-v1_5 SHA-256 vectors (test/fixtures/wycheproof/) against both RSA
 * checks of the provider's signature: the plain-JavaScript one (provider/schemas/signature.ts) and
 * node:crypto's (provider/signing.ts, what the API and the worker verify webhooks with). Every valid
 * signature is accepted and every invalid one refused by both; an "acceptable" one (a legacy encoding)
 * is refused by the JavaScript check, which compares the one encoding the standard allows.
 */
import { createPublicKey } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { RsaSha256Verifier } from '../../../provider/schemas/signature';
import { verifyBytes } from '../../../provider/signing';

interface VectorFile {
  algorithm: string;
  numberOfTests: number;
  testGroups: {
    sha: string;
    publicKeyDer: string;
    publicKey: { modulus: string; publicExponent: string };
    tests: { tcId: number; msg: string; sig: string; result: 'valid' | 'invalid' | 'acceptable' }[];
  }[];
}

const DIR = path.resolve(__dirname, '../../fixtures/wycheproof');
const FILES = [2048, 3072, 4096].map((bits) => `rsa_signature_${bits}_sha256_test.json`);

describe.each(FILES)('Wycheproof %s', (file) => {
  const vectors = JSON.parse(fs.readFileSync(path.join(DIR, file), 'utf8')) as VectorFile;
  const cases = vectors.testGroups.flatMap((group) => {
    const js = new RsaSha256Verifier({
      n: group.publicKey.modulus,
      e: Number.parseInt(group.publicKey.publicExponent, 16),
    });
    const node = createPublicKey({
      key: Buffer.from(group.publicKeyDer, 'hex'),
      format: 'der',
      type: 'spki',
    });
    return group.tests.map((t) => {
      const message = Buffer.from(t.msg, 'hex');
      const signature = Buffer.from(t.sig, 'hex').toString('base64');
      return {
        id: t.tcId,
        result: t.result,
        js: js.verifyBytes(message, signature),
        node: verifyBytes(message, signature, node),
      };
    });
  });

  it('is the file it says it is', () => {
    expect(vectors.algorithm).toBe('RSASSA-PKCS1-v1_5');
    expect(vectors.testGroups.every((g) => g.sha === 'SHA-256')).toBe(true);
    expect(cases).toHaveLength(vectors.numberOfTests);
    expect(cases.filter((c) => c.result === 'valid').length).toBeGreaterThan(0);
  });

  it('every valid signature is accepted, by both checks', () => {
    const refused = cases.filter((c) => c.result === 'valid' && !(c.js && c.node)).map((c) => c);
    expect(refused).toEqual([]);
  });

  it('every invalid signature is refused, by both checks', () => {
    const accepted = cases.filter((c) => c.result === 'invalid' && (c.js || c.node));
    expect(accepted).toEqual([]);
  });

  it('the JavaScript check accepts nothing that is not valid (legacy encodings included)', () => {
    expect(cases.filter((c) => c.result !== 'valid' && c.js)).toEqual([]);
  });
});
