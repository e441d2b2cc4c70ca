/**
 * Project Wycheproof's RSASSA-PKCS1-v1_5 SHA-256 vectors (test/fixtures/wycheproof/) against the check of
 * the provider's signature that the API and the worker verify webhooks with (provider/signing.ts, on
 * node:crypto): every valid signature is accepted and every invalid one refused.
 */
import { createPublicKey } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
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

  it('every valid signature is accepted', () => {
    expect(cases.filter((c) => c.result === 'valid' && !c.node)).toEqual([]);
  });

  it('every invalid signature is refused', () => {
    expect(cases.filter((c) => c.result === 'invalid' && c.node)).toEqual([]);
  });
});
