/**
 * Withdrawn provider service keys (provider/withdrawn-keys.ts): a fingerprint added to the list file
 * makes the key verify nothing, in the API's verifier and the worker's verification alike, as soon as
 * the file is looked at again, with no restart; the other keys of a rotation go on verifying. A list that
 * cannot be read stops the start, and later fails every verification until it is fixed.
 */
import { createHash, sign } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createProofActivities } from '../../../activities/proof-activities';
import {
  createWebhookVerifier,
  keyFingerprint,
  providerConfigFromEnv,
  webhookVerifierFromConfig,
  withdrawKey,
  WithdrawnKeys,
} from '../../../provider';
import { generateTestKeyPair } from '../../helpers/keys';

const old = generateTestKeyPair();
const next = generateTestKeyPair();
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paysaga-withdrawn-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const body = Buffer.from(
  '{"type":"checkout_results","session_info":{"id":"ps_5","transaction_status":"completed"}}',
);
const signedBy = (k: typeof old) => sign('sha256', body, k.privateKey).toString('base64');

let clock = 0;
const listIn = (name: string) => path.join(dir, name);

describe('withdrawn service keys', () => {
  it('a fingerprint is the SHA-256 of the public key (SPKI DER), from either half of the pair', () => {
    const der = old.publicKey.export({ type: 'spki', format: 'der' });
    const expected = `sha256:${createHash('sha256').update(der).digest('hex')}`;
    expect(keyFingerprint(old.publicKey)).toBe(expected);
  });

  it('a key withdrawn while running verifies nothing from the next look at the list; the others go on', async () => {
    const file = listIn('running');
    const withdrawn = new WithdrawnKeys(file, { checkEveryMs: 2_000, now: () => clock });
    const verify = createWebhookVerifier([old.publicPem, next.publicPem], { withdrawn });
    const worker = createProofActivities(verify);
    expect(verify(body, signedBy(old))).toMatchObject({ ok: true, keyIndex: 0 });

    expect(withdrawKey(file, keyFingerprint(old.publicKey), 'withdrawn now: leaked')).toBe(true);
    expect(withdrawKey(file, keyFingerprint(old.publicKey), 'again')).toBe(false);
    expect(fs.readFileSync(file, 'utf8')).toBe(`${keyFingerprint(old.publicKey)} # withdrawn now: leaked\n`);
    // Looked at again at most every 2 s: then refused, naming the key.
    clock += 2_000;
    const refused = verify(body, signedBy(old));
    expect(refused).toEqual({
      ok: false,
      reason: 'withdrawn_key',
      detail: `signed with provider service key 1 (${keyFingerprint(old.publicKey)}), withdrawn (${file})`,
    });
    expect(await worker.verifyProviderEvent({ body: body.toString(), signature: signedBy(old) })).toEqual(
      refused,
    );
    expect(verify(body, signedBy(next))).toMatchObject({ ok: true, keyIndex: 1 });
    expect(
      await worker.verifyProviderEvent({ body: body.toString(), signature: signedBy(next) }),
    ).toMatchObject({
      ok: true,
    });
  });

  it('a missing list lists nothing; a bad line stops the start, naming the file and line', () => {
    expect(() => new WithdrawnKeys(listIn('none'))).not.toThrow();
    const bad = listIn('bad');
    fs.writeFileSync(bad, `# keys withdrawn\n${keyFingerprint(old.publicKey)}\nsha256:abc\n`);
    expect(() => new WithdrawnKeys(bad)).toThrow(
      `withdrawn-keys list ${bad}, line 3: not a key fingerprint (sha256:<64 hex digits>)`,
    );
  });

  it('a list spoiled while running fails every verification until it is fixed (no key believed meanwhile)', () => {
    const file = listIn('spoiled');
    const withdrawn = new WithdrawnKeys(file, { checkEveryMs: 0 });
    const verify = createWebhookVerifier([next.publicPem], { withdrawn });
    expect(verify(body, signedBy(next)).ok).toBe(true);
    fs.writeFileSync(file, 'not a fingerprint\n');
    expect(() => verify(body, signedBy(next))).toThrow(`withdrawn-keys list ${file}, line 1`);
    fs.writeFileSync(file, `${keyFingerprint(old.publicKey)} # fixed\n`);
    expect(verify(body, signedBy(next)).ok).toBe(true);
    fs.chmodSync(file, 0o000);
    if (process.getuid?.() !== 0) expect(() => verify(body, signedBy(next))).toThrow('cannot be read');
    fs.chmodSync(file, 0o644);
  });

  it('PAYSAGA_WITHDRAWN_KEYS configures the verifier of the API and the worker', () => {
    const file = listIn('configured');
    withdrawKey(file, keyFingerprint(old.publicKey), 'configured');
    const oldFile = listIn('old.pem');
    const nextFile = listIn('next.pem');
    fs.writeFileSync(oldFile, old.publicPem);
    fs.writeFileSync(nextFile, next.publicPem);
    const verify = webhookVerifierFromConfig(
      providerConfigFromEnv({
        PAYSAGA_PROVIDER_URL: 'http://127.0.0.1:9',
        PAYSAGA_PROJECT_ID: 'p1',
        PAYSAGA_PARTNER_PRIVATE_KEY: next.privatePem,
        PAYSAGA_PROVIDER_TEST_SERVICE_KEYS: `${oldFile},${nextFile}`,
        PAYSAGA_WITHDRAWN_KEYS: file,
      }),
    );
    expect(verify(body, signedBy(old))).toMatchObject({ ok: false, reason: 'withdrawn_key' });
    expect(verify(body, signedBy(next))).toMatchObject({ ok: true, keyIndex: 1 });
    fs.writeFileSync(file, 'sha256:zz\n');
    expect(() =>
      webhookVerifierFromConfig(
        providerConfigFromEnv({
          PAYSAGA_PROVIDER_URL: 'http://127.0.0.1:9',
          PAYSAGA_PROJECT_ID: 'p1',
          PAYSAGA_PARTNER_PRIVATE_KEY: next.privatePem,
          PAYSAGA_PROVIDER_TEST_SERVICE_KEYS: nextFile,
          PAYSAGA_WITHDRAWN_KEYS: file,
        }),
      ),
    ).toThrow(`withdrawn-keys list ${file}, line 1`);
  });
});
