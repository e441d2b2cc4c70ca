/**
 * RSA key pairs for local development and tests: one for the partner (signs requests to the provider,
 * verifies nothing) and one for the sandbox service (signs webhooks and responses). PEM encoded:
 * PKCS#8 private keys, SPKI public keys.
 */
import { generateKeyPair } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';

const generateKeyPairAsync = promisify(generateKeyPair);

export const RSA_MODULUS_BITS = 2048;
export const KEYS_DIR_MODE = 0o700;
export const PRIVATE_KEY_MODE = 0o600;
export const PUBLIC_KEY_MODE = 0o644;

/** File names inside the output directory. */
export const KEY_FILES = {
  partnerPrivate: 'partner_private.pem',
  partnerPublic: 'partner_public.pem',
  servicePrivate: 'service_private.pem',
  servicePublic: 'service_public.pem',
} as const;

export type KeyFileName = keyof typeof KEY_FILES;

export interface GenerateKeysOptions {
  outDir: string;
  /** Overwrite existing key files (default: refuse). */
  force?: boolean;
}

export interface GeneratedKeys {
  outDir: string;
  /** Absolute paths of the files written. */
  files: Record<KeyFileName, string>;
  /** Set when outDir already existed and is readable or writable by group/others (left as it was). */
  warning?: string;
}

export class KeysExistError extends Error {
  override name = 'KeysExistError';
  constructor(readonly existing: string[]) {
    super(`refusing to overwrite existing key files (use --force to replace them): ${existing.join(', ')}`);
  }
}

async function rsaPemPair(): Promise<{ privateKey: string; publicKey: string }> {
  return generateKeyPairAsync('rsa', {
    modulusLength: RSA_MODULUS_BITS,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
}

function writeKeyFile(file: string, content: string, mode: number, force: boolean): void {
  // 'wx' fails if the file appeared since we checked; chmod afterwards because umask trims `mode` and an
  // overwritten file keeps its old mode.
  fs.writeFileSync(file, content, { mode, flag: force ? 'w' : 'wx' });
  fs.chmodSync(file, mode);
}

/** Generate both key pairs into `outDir` (created with mode 0700 if missing). */
export async function generateKeys(options: GenerateKeysOptions): Promise<GeneratedKeys> {
  const outDir = path.resolve(options.outDir);
  const force = options.force ?? false;
  const files = Object.fromEntries(
    Object.entries(KEY_FILES).map(([key, name]) => [key, path.join(outDir, name)]),
  ) as Record<KeyFileName, string>;

  if (!force) {
    const existing = Object.values(files).filter((file) => fs.existsSync(file));
    if (existing.length > 0) throw new KeysExistError(existing);
  }

  let warning: string | undefined;
  const created = fs.mkdirSync(outDir, { recursive: true, mode: KEYS_DIR_MODE });
  if (created !== undefined) {
    fs.chmodSync(outDir, KEYS_DIR_MODE); // umask may have trimmed it
  } else {
    const mode = fs.statSync(outDir).mode & 0o777;
    if (mode & 0o077) {
      warning = `${outDir} is accessible by group/others (mode ${mode.toString(8)}); consider chmod 700`;
    }
  }

  const [partner, service] = await Promise.all([rsaPemPair(), rsaPemPair()]);
  writeKeyFile(files.partnerPrivate, partner.privateKey, PRIVATE_KEY_MODE, force);
  writeKeyFile(files.partnerPublic, partner.publicKey, PUBLIC_KEY_MODE, force);
  writeKeyFile(files.servicePrivate, service.privateKey, PRIVATE_KEY_MODE, force);
  writeKeyFile(files.servicePublic, service.publicKey, PUBLIC_KEY_MODE, force);

  return { outDir, files, ...(warning ? { warning } : {}) };
}
