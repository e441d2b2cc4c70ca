/**
 * The secrets docker-compose.yml refuses to start without, written into its `.env` by
 * `paysaga setup --compose`: each fresh from the operating system's random source, in the form the
 * variable's reader accepts. A value already in the file is never changed; only a missing or empty
 * variable, or the `CHANGE-ME` placeholder of .env.example, gets one. Everything else in the file
 * (comments, other variables, their order) stays as it was.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { createApiToken, SCOPES } from '../api/api-tokens';
import { generateCodecKeySpec } from '../platform/codec';

/** The placeholder .env.example gives each secret: a value to replace, not one to keep. */
export const PLACEHOLDER = 'CHANGE-ME';

/** Hex: safe in a URL, in SQL tool flags and in compose's interpolation alike. */
const hex = (bytes: number) => () => randomBytes(bytes).toString('hex');

/** Each secret docker-compose.yml requires (`${NAME:?...}`), with the maker of a value its reader accepts. */
export const COMPOSE_SECRETS: Readonly<Record<string, () => string>> = {
  // The `temporal` user's password (Temporal's server and schema tool, PostgreSQL itself).
  POSTGRES_PASSWORD: hex(24),
  // Written into PAYSAGA_DATABASE_URL, so letters and digits only.
  PAYSAGA_DATABASE_PASSWORD: hex(24),
  // <id>:base64 of 32 bytes (platform/codec.ts).
  PAYSAGA_CODEC_KEYS: () => generateCodecKeySpec(),
  // One token with every scope, made as `paysaga token create` makes them (api/api-tokens.ts).
  PAYSAGA_API_TOKENS: () => createApiToken(SCOPES).entry,
  // HMAC secret of payers' return links: 32 random bytes (at least 16 characters, no comma).
  PAYSAGA_RETURN_SECRETS: () => randomBytes(32).toString('base64url'),
  // Bearer token of the codec, sent by the codec proxy in a header: URL-safe characters.
  PAYSAGA_CODEC_TOKEN: () => randomBytes(32).toString('base64url'),
};

export interface ComposeEnvReport {
  file: string;
  /** True when the file did not exist and was written. */
  created: boolean;
  /** Variables that got a fresh value (they were missing, empty or the placeholder). */
  added: string[];
  /** Variables that already had a value, left as they were. */
  kept: string[];
}

const ASSIGNMENT = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=(.*)$/;

/** A value as compose reads it, enough to tell whether it is set: quotes and a trailing comment off. */
function valueOf(raw: string): string {
  const v = raw.trim();
  const quoted = /^(['"])(.*)\1$/.exec(v);
  if (quoted) return quoted[2]!;
  return v.replace(/\s+#.*$/, '');
}

/**
 * Adds a fresh value for every secret the file lacks and reports what it did. A new file is readable by
 * its owner only.
 */
export function writeComposeEnv(file: string): ComposeEnvReport {
  const created = !fs.existsSync(file);
  const text = created ? '' : fs.readFileSync(file, 'utf8');
  const lines = text === '' ? [] : text.replace(/\r?\n$/, '').split(/\r?\n/);
  const added: string[] = [];
  const kept: string[] = [];
  const seen = new Set<string>();

  const out = lines.map((line) => {
    const m = ASSIGNMENT.exec(line);
    const name = m?.[1];
    if (!name || !(name in COMPOSE_SECRETS) || seen.has(name)) return line;
    seen.add(name);
    const value = valueOf(m[2]!);
    if (value !== '' && value !== PLACEHOLDER) {
      kept.push(name);
      return line;
    }
    added.push(name);
    return `${name}=${COMPOSE_SECRETS[name]!()}`;
  });

  const missing = Object.keys(COMPOSE_SECRETS).filter((name) => !seen.has(name));
  if (missing.length > 0) {
    if (out.length > 0 && out[out.length - 1] !== '') out.push('');
    out.push('# Made by `paysaga setup --compose`: fresh random secrets (docker-compose.yml needs them).');
    for (const name of missing) {
      added.push(name);
      out.push(`${name}=${COMPOSE_SECRETS[name]!()}`);
    }
  }

  if (added.length > 0) {
    if (created) fs.writeFileSync(file, `${out.join('\n')}\n`, { mode: 0o600 });
    else fs.writeFileSync(file, `${out.join('\n')}\n`);
  }
  return { file, created: created && added.length > 0, added, kept };
}
