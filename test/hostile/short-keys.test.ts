/**
 * Hostile input (`npm run test:hostile`): a deployment given an RSA key under 2048 bits, as the
 * provider's service key or as the partner's private key. `paysaga api` and `paysaga worker`, run as real
 * processes, refuse to start and say which key and how long it is; nothing is contacted (the Temporal
 * address and the store point where nothing listens: a process past its keys would fail there instead).
 */
import { generateKeyPairSync } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runPaysaga } from '../helpers/cli-run';

describe('keys under 2048 bits stop paysaga at start', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paysaga-short-keys-'));
  const write = (name: string, bits: number) => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: bits });
    const priv = path.join(dir, `${name}_private.pem`);
    const pub = path.join(dir, `${name}_public.pem`);
    fs.writeFileSync(priv, privateKey.export({ type: 'pkcs8', format: 'pem' }));
    fs.writeFileSync(pub, publicKey.export({ type: 'spki', format: 'pem' }));
    return { priv, pub };
  };
  const weak = write('weak', 1024);
  const good = write('good', 2048);
  const base = {
    HOME: os.tmpdir(),
    TEMPORAL_ADDRESS: '127.0.0.1:1',
    PAYSAGA_DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
    PAYSAGA_DATABASE_WAIT_MS: '0',
    PAYSAGA_ALLOW_UNENCRYPTED: 'true',
    PAYSAGA_PROVIDER_URL: 'http://127.0.0.1:1',
    PAYSAGA_PROJECT_ID: 'p1',
    PAYSAGA_API_TOKENS: 't'.repeat(40),
    PAYSAGA_PUBLIC_PORT: '0',
    PAYSAGA_INTERNAL_PORT: '0',
    PAYSAGA_LOG_LEVEL: 'warn',
  };
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it.each([
    [
      'api',
      'service',
      { PAYSAGA_PARTNER_PRIVATE_KEY: good.priv, PAYSAGA_PROVIDER_TEST_SERVICE_KEYS: weak.pub },
    ],
    [
      'api',
      'partner',
      { PAYSAGA_PARTNER_PRIVATE_KEY: weak.priv, PAYSAGA_PROVIDER_TEST_SERVICE_KEYS: good.pub },
    ],
    [
      'worker',
      'service',
      { PAYSAGA_PARTNER_PRIVATE_KEY: good.priv, PAYSAGA_PROVIDER_TEST_SERVICE_KEYS: weak.pub },
    ],
    [
      'worker',
      'partner',
      { PAYSAGA_PARTNER_PRIVATE_KEY: weak.priv, PAYSAGA_PROVIDER_TEST_SERVICE_KEYS: good.pub },
    ],
  ])(
    'paysaga %s with a 1024-bit %s key',
    async (command, which, keys) => {
      const run = await runPaysaga([command], { ...base, ...keys });
      const named =
        which === 'service'
          ? `provider service key 1 (${weak.pub}): an RSA key of 1024 bits; at least 2048 are required`
          : `partner private key (${weak.priv}): an RSA key of 1024 bits; at least 2048 are required`;
      // The first thing it says, and the reason it stops: the key, before anything is contacted.
      expect({ code: run.code, said: run.stderr.split('\n')[0] }).toEqual({
        code: 1,
        said: `paysaga: ${named}`,
      });
    },
    60_000,
  );
});
