import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestKeyPair {
  privateKey: KeyObject;
  publicKey: KeyObject;
  privatePem: string;
  publicPem: string;
}

export function generateTestKeyPair(): TestKeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    privateKey,
    publicKey,
    privatePem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

export interface TestKeys {
  partner: TestKeyPair;
  service: TestKeyPair;
  /** PEM files of both pairs, for code that takes paths (sandbox config, CLI). */
  dir: string;
  paths: { partnerPrivate: string; partnerPublic: string; servicePrivate: string; servicePublic: string };
}

/** Fresh partner and service key pairs, also written to a temp folder. */
export function generateTestKeys(): TestKeys {
  const partner = generateTestKeyPair();
  const service = generateTestKeyPair();
  const dir = mkdtempSync(join(tmpdir(), 'paysaga-keys-'));
  const paths = {
    partnerPrivate: join(dir, 'partner_private.pem'),
    partnerPublic: join(dir, 'partner_public.pem'),
    servicePrivate: join(dir, 'service_private.pem'),
    servicePublic: join(dir, 'service_public.pem'),
  };
  writeFileSync(paths.partnerPrivate, partner.privatePem, { mode: 0o600 });
  writeFileSync(paths.partnerPublic, partner.publicPem);
  writeFileSync(paths.servicePrivate, service.privatePem, { mode: 0o600 });
  writeFileSync(paths.servicePublic, service.publicPem);
  return { partner, service, dir, paths };
}
