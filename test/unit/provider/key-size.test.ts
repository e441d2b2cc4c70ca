/**
 * RSA keys under 2048 bits, and keys of another type, are refused where they are loaded: the provider's
 * service keys (webhook verification, in the API and the worker), the partner's private keys (the
 * provider client), the sandbox's keys, and a worker started from its environment stops before it
 * connects anywhere, naming the key and its size.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  createWebhookVerifier,
  MIN_RSA_KEY_BITS,
  ProviderClient,
  providerClientFromConfig,
  providerConfigFromEnv,
} from '../../../provider';
import { resolveSandboxConfig } from '../../../sandbox/config';
import { startWorkerFromEnv } from '../../../workers/main';

const rsa = (bits: number) => generateKeyPairSync('rsa', { modulusLength: bits });
const pem = (k: KeyObject) =>
  k
    .export(k.type === 'private' ? { type: 'pkcs8', format: 'pem' } : { type: 'spki', format: 'pem' })
    .toString();

const weak = rsa(1024);
const tiny = rsa(512);
const good = rsa(2048);
const ec = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paysaga-key-size-'));
const file = (name: string, k: KeyObject) => {
  const p = path.join(dir, name);
  fs.writeFileSync(p, pem(k));
  return p;
};
const weakPublicFile = file('weak_public.pem', weak.publicKey);
const weakPrivateFile = file('weak_private.pem', weak.privateKey);
const goodPublicFile = file('good_public.pem', good.publicKey);
const goodPrivateFile = file('good_private.pem', good.privateKey);

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('keys under 2048 bits are refused at load', () => {
  it('the floor is 2048 bits', () => expect(MIN_RSA_KEY_BITS).toBe(2048));

  it('a provider service key: by file, inline PEM or KeyObject, named by its place in the list', () => {
    expect(() => createWebhookVerifier([goodPublicFile, weakPublicFile])).toThrow(
      `provider service key 2 (${weakPublicFile}): an RSA key of 1024 bits; at least 2048 are required`,
    );
    expect(() => createWebhookVerifier([pem(tiny.publicKey)])).toThrow(
      'provider service key 1 (inline PEM): an RSA key of 512 bits; at least 2048 are required',
    );
    expect(() => createWebhookVerifier([weak.publicKey])).toThrow(
      'provider service key 1: an RSA key of 1024 bits',
    );
    expect(() => createWebhookVerifier([ec.publicKey])).toThrow(
      'provider service key 1: an RSA key is needed, this one is ec',
    );
    expect(() => createWebhookVerifier([goodPublicFile, rsa(3072).publicKey])).not.toThrow();
  });

  it("the partner's private key and a project's key", () => {
    const base = { baseUrl: 'http://127.0.0.1:9', projectId: 'p1' };
    expect(() => new ProviderClient({ ...base, privateKey: weakPrivateFile })).toThrow(
      `partner private key (${weakPrivateFile}): an RSA key of 1024 bits; at least 2048 are required`,
    );
    expect(
      () =>
        new ProviderClient({
          ...base,
          privateKey: goodPrivateFile,
          projects: [{ id: 'payouts', privateKey: pem(weak.privateKey) }],
        }),
    ).toThrow('private key of project payouts (inline PEM): an RSA key of 1024 bits');
    expect(() => new ProviderClient({ ...base, privateKey: ec.privateKey })).toThrow(
      'partner private key: an RSA key is needed',
    );
    const config = providerConfigFromEnv({
      PAYSAGA_PROVIDER_URL: 'http://127.0.0.1:9',
      PAYSAGA_PROJECT_ID: 'p1',
      PAYSAGA_PARTNER_PRIVATE_KEY: weakPrivateFile,
    });
    expect(() => providerClientFromConfig(config)).toThrow('an RSA key of 1024 bits');
  });

  it("the sandbox's service key and a project's public key", () => {
    const project = { id: 'p1', publicKey: goodPublicFile };
    expect(() => resolveSandboxConfig({ serviceKey: weakPrivateFile, projects: [project] })).toThrow(
      'serviceKey: an RSA key of 1024 bits; at least 2048 are required',
    );
    expect(() =>
      resolveSandboxConfig({
        serviceKey: goodPrivateFile,
        projects: [{ id: 'p1', publicKey: weakPublicFile }],
      }),
    ).toThrow('projects[p1].publicKey: an RSA key of 1024 bits');
    expect(() => resolveSandboxConfig({ serviceKey: goodPrivateFile, projects: [project] })).not.toThrow();
  });

  it('a worker with a short key stops at start, before connecting anywhere', async () => {
    const env = {
      // Nothing listens there: a worker that got past its keys would fail to connect instead.
      TEMPORAL_ADDRESS: '127.0.0.1:1',
      PAYSAGA_DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
      PAYSAGA_ALLOW_UNENCRYPTED: 'true',
      PAYSAGA_PROVIDER_URL: 'http://127.0.0.1:9',
      PAYSAGA_PROJECT_ID: 'p1',
      PAYSAGA_LOG_LEVEL: 'silent',
    };
    await expect(
      startWorkerFromEnv({
        env: {
          ...env,
          PAYSAGA_PARTNER_PRIVATE_KEY: goodPrivateFile,
          PAYSAGA_PROVIDER_TEST_SERVICE_KEYS: weakPublicFile,
        },
      }),
    ).rejects.toThrow(`provider service key 1 (${weakPublicFile}): an RSA key of 1024 bits`);
    await expect(
      startWorkerFromEnv({
        env: {
          ...env,
          PAYSAGA_PARTNER_PRIVATE_KEY: weakPrivateFile,
          PAYSAGA_PROVIDER_TEST_SERVICE_KEYS: goodPublicFile,
        },
      }),
    ).rejects.toThrow(`partner private key (${weakPrivateFile}): an RSA key of 1024 bits`);
  });
});
