/**
 * The data folder of `paysaga dev` (default `.data/`):
 *
 *   temporal.sqlite   the Temporal dev server's state (sessions survive a restart)
 *   sandbox.sqlite    the sandbox provider's state (sandbox/sqlite-store.ts; `.pid` beside it while open)
 *   keys/             partner and sandbox-service RSA keys, generated once (cli/keys.ts)
 *   api-token         the bearer token of the local API, generated once (mode 0600)
 *   codec-keys        the payload codec key (PAYSAGA_CODEC_KEYS format), generated once (mode 0600)
 *   return-secret     the secret that signs payers' return URLs (PAYSAGA_RETURN_SECRETS), generated once (0600)
 *   withdrawn-keys    provider service keys withdrawn (PAYSAGA_WITHDRAWN_KEYS; `paysaga keys withdraw --data`)
 *   dev.json          while `paysaga dev` runs: its pid and URLs (read by `paysaga demo`)
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { generateCodecKeySpec } from '../../platform/codec';
import { processAlive } from '../../sandbox/process-alive';
import { generateKeys, KEY_FILES, type KeyFileName } from '../keys';

export const DEFAULT_DATA_DIR = '.data';
export const API_TOKEN_FILE = 'api-token';
export const DEV_STATE_FILE = 'dev.json';
export const CODEC_KEYS_FILE = 'codec-keys';
export const RETURN_SECRET_FILE = 'return-secret';
export const WITHDRAWN_KEYS_FILE = 'withdrawn-keys';

export { processAlive };

export interface DevData {
  dir: string;
  dbFile: string;
  /** The embedded store's PostgreSQL files (PGlite). */
  pgDir: string;
  keysDir: string;
  keys: Record<KeyFileName, string>;
  tokenFile: string;
  token: string;
  codecKeysFile: string;
  /** `id:base64key` (PAYSAGA_CODEC_KEYS format). */
  codecKeys: string;
  /** Signs the back_url of each session (PAYSAGA_RETURN_SECRETS format: one secret). */
  returnSecret: string;
  /** What this run created (false: reused from an earlier run). */
  created: { keys: boolean; token: boolean; codecKeys: boolean; returnSecret: boolean };
}

/** What a running `paysaga dev` writes to `<data>/dev.json`. */
export interface DevState {
  pid: number;
  /** Where the partner API /v1 is served. */
  apiUrl: string;
  /** The API's public listener (webhooks, payer returns) and internal one (health, metrics, docs, codec). */
  publicUrl: string;
  internalUrl: string;
  sandboxUrl: string;
  temporalAddress: string;
  temporalUiUrl: string;
  namespace: string;
  temporalPid: number;
  /** The embedded store (absent when PAYSAGA_DATABASE_URL named a server). */
  databaseUrl?: string;
  startedAt: string;
}

export function resolveDataDir(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return path.resolve(flag || env.PAYSAGA_DATA_DIR || DEFAULT_DATA_DIR);
}

function readSecret(file: string): string | undefined {
  try {
    const value = fs.readFileSync(file, 'utf8').trim();
    return value || undefined;
  } catch {
    return undefined;
  }
}

function writeSecret(file: string, value: string): void {
  fs.writeFileSync(file, `${value}\n`, { mode: 0o600 });
  fs.chmodSync(file, 0o600);
}

export function readApiToken(dir: string): string | undefined {
  return readSecret(path.join(dir, API_TOKEN_FILE));
}

/** Creates the folder, the keys and the API token when missing; reuses them otherwise. */
export async function prepareDataDir(dir: string): Promise<DevData> {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const keysDir = path.join(dir, 'keys');
  const keys = Object.fromEntries(
    Object.entries(KEY_FILES).map(([k, name]) => [k, path.join(keysDir, name)]),
  ) as Record<KeyFileName, string>;
  const present = Object.values(keys).filter((f) => fs.existsSync(f));
  let createdKeys = false;
  if (present.length === 0) {
    await generateKeys({ outDir: keysDir });
    createdKeys = true;
  } else if (present.length < Object.keys(keys).length) {
    throw new Error(
      `${keysDir} holds only some of the key files (${present.map((f) => path.basename(f)).join(', ')}); ` +
        'remove the folder to have new keys made, or complete it with `paysaga keys generate --out <dir> --force`',
    );
  }

  const tokenFile = path.join(dir, API_TOKEN_FILE);
  let token = readSecret(tokenFile);
  const createdToken = !token;
  if (!token) {
    token = `psg_dev_${randomBytes(24).toString('base64url')}`;
    writeSecret(tokenFile, token);
  }
  const codecKeysFile = path.join(dir, CODEC_KEYS_FILE);
  let codecKeys = readSecret(codecKeysFile);
  const createdCodecKeys = !codecKeys;
  if (!codecKeys) {
    codecKeys = generateCodecKeySpec('dev1');
    writeSecret(codecKeysFile, codecKeys);
  }
  const returnSecretFile = path.join(dir, RETURN_SECRET_FILE);
  let returnSecret = readSecret(returnSecretFile);
  const createdReturnSecret = !returnSecret;
  if (!returnSecret) {
    returnSecret = randomBytes(32).toString('base64url');
    writeSecret(returnSecretFile, returnSecret);
  }
  return {
    dir,
    dbFile: path.join(dir, 'temporal.sqlite'),
    pgDir: path.join(dir, 'pg'),
    keysDir,
    keys,
    tokenFile,
    token,
    codecKeysFile,
    codecKeys,
    returnSecret,
    created: {
      keys: createdKeys,
      token: createdToken,
      codecKeys: createdCodecKeys,
      returnSecret: createdReturnSecret,
    },
  };
}

export function readDevState(dir: string): DevState | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, DEV_STATE_FILE), 'utf8')) as DevState;
  } catch {
    return undefined;
  }
}

export function writeDevState(dir: string, state: DevState): void {
  const file = path.join(dir, DEV_STATE_FILE);
  fs.writeFileSync(`${file}.tmp`, `${JSON.stringify(state, null, 2)}\n`);
  fs.renameSync(`${file}.tmp`, file);
}

export function removeDevState(dir: string, pid = process.pid): void {
  if (readDevState(dir)?.pid === pid) fs.rmSync(path.join(dir, DEV_STATE_FILE), { force: true });
}

/** The state of another `paysaga dev` that still runs on this folder, if any. */
export function runningDev(dir: string): DevState | undefined {
  const state = readDevState(dir);
  if (state && state.pid !== process.pid && processAlive(state.pid)) return state;
  return undefined;
}
