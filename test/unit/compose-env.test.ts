/**
 * `paysaga setup --compose` (cli/compose-env.ts, cli/commands/setup.ts): a new user's `.env` gets every
 * secret docker-compose.yml requires, each fresh and in the form its reader accepts; an existing value
 * is never changed, and the command says which it added and which it kept. In a temporary folder; the
 * unit project's socket guard shows it contacts nothing.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Command } from 'commander';
import { parseApiTokens } from '../../api/api-tokens';
import { returnSecretsFromEnv } from '../../client/return-url';
import { COMPOSE_SECRETS, PLACEHOLDER, writeComposeEnv } from '../../cli/compose-env';
import { register as registerSetup } from '../../cli/commands/setup';
import { parseCodecKeys } from '../../platform/codec';

const ROOT = path.resolve(__dirname, '../..');

let dir: string;
let envFile: string;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paysaga-compose-env-'));
  envFile = path.join(dir, '.env');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The file as compose reads it (the forms this command writes and .env.example uses). */
function readEnv(file: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const m = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(line);
    if (m) env[m[1]!] = m[2]!;
  }
  return env;
}

/** Runs `paysaga setup --compose --env-file <file>` through its commander registration. */
async function setupCompose(file: string): Promise<string[]> {
  const lines: string[] = [];
  const program = new Command().exitOverride();
  registerSetup(program, { out: (l) => lines.push(l), err: (l) => lines.push(l), env: {} });
  await program.parseAsync(['node', 'paysaga', 'setup', '--compose', '--env-file', file]);
  return lines;
}

test('every variable docker-compose.yml requires is one it writes, and .env.example lists each', () => {
  const compose = fs.readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8');
  const required = new Set([...compose.matchAll(/\$\{([A-Z][A-Z0-9_]*):\?/g)].map((m) => m[1]!));
  expect([...required].sort()).toEqual(Object.keys(COMPOSE_SECRETS).sort());
  const example = fs.readFileSync(path.join(ROOT, '.env.example'), 'utf8');
  for (const name of required) expect(example).toContain(`\n${name}=${PLACEHOLDER}\n`);
});

test('a new .env: every secret, fresh, in the form its reader accepts, readable by its owner only', async () => {
  const lines = await setupCompose(envFile);
  const env = readEnv(envFile);
  expect(Object.keys(env).sort()).toEqual(Object.keys(COMPOSE_SECRETS).sort());
  expect(lines[0]).toBe(
    `paysaga setup --compose: wrote ${envFile}: ${Object.keys(COMPOSE_SECRETS).join(', ')} (fresh random values)`,
  );
  expect(lines.at(-1)).toContain('next: docker compose up -d --build');
  expect(fs.statSync(envFile).mode & 0o777).toBe(0o600);

  expect(env.POSTGRES_PASSWORD).toMatch(/^[0-9a-f]{48}$/);
  // Written into a URL: letters and digits only.
  expect(env.PAYSAGA_DATABASE_PASSWORD).toMatch(/^[0-9a-f]{48}$/);
  const [codecKey] = parseCodecKeys(env.PAYSAGA_CODEC_KEYS!);
  expect(codecKey!.key).toHaveLength(32);
  const [token] = parseApiTokens(env.PAYSAGA_API_TOKENS);
  expect(token!.scopes).toEqual(['read', 'payments', 'admin']);
  expect(returnSecretsFromEnv({ PAYSAGA_RETURN_SECRETS: env.PAYSAGA_RETURN_SECRETS })).toHaveLength(1);
  expect(env.PAYSAGA_RETURN_SECRETS).toMatch(/^[A-Za-z0-9_-]{43}$/);
  expect(env.PAYSAGA_CODEC_TOKEN).toMatch(/^[A-Za-z0-9_-]{43}$/);

  // Fresh each time: another new file shares no value with this one.
  const other = path.join(dir, 'other.env');
  writeComposeEnv(other);
  const again = readEnv(other);
  for (const name of Object.keys(COMPOSE_SECRETS)) expect(again[name]).not.toBe(env[name]);
});

test('run again, it changes nothing and says so', async () => {
  await setupCompose(envFile);
  const before = fs.readFileSync(envFile, 'utf8');
  const lines = await setupCompose(envFile);
  expect(fs.readFileSync(envFile, 'utf8')).toBe(before);
  expect(lines).toContain(
    `paysaga setup --compose: kept in ${envFile} as they were: ${Object.keys(COMPOSE_SECRETS).join(', ')}`,
  );
  expect(lines).toContain(`paysaga setup --compose: ${envFile} already has every secret: nothing to change`);
});

test('an existing .env: its values, comments and other variables stay; placeholders and gaps are filled', async () => {
  const mine = [
    '# my deployment',
    'POSTGRES_PASSWORD=my-own-password',
    'PAYSAGA_LOG_LEVEL=debug',
    `PAYSAGA_CODEC_KEYS=${PLACEHOLDER}`,
    'PAYSAGA_RETURN_SECRETS=',
    'PAYSAGA_API_TOKENS="quoted_token_that_is_long_enough_000000:read"',
  ].join('\n');
  fs.writeFileSync(envFile, `${mine}\n`, { mode: 0o640 });
  const lines = await setupCompose(envFile);
  const text = fs.readFileSync(envFile, 'utf8');
  const env = readEnv(envFile);

  expect(
    text.startsWith('# my deployment\nPOSTGRES_PASSWORD=my-own-password\nPAYSAGA_LOG_LEVEL=debug\n'),
  ).toBe(true);
  expect(env.PAYSAGA_API_TOKENS).toBe('"quoted_token_that_is_long_enough_000000:read"');
  expect(env.PAYSAGA_CODEC_KEYS).not.toBe(PLACEHOLDER);
  expect(parseCodecKeys(env.PAYSAGA_CODEC_KEYS!)).toHaveLength(1);
  expect(env.PAYSAGA_RETURN_SECRETS).toMatch(/^[A-Za-z0-9_-]{43}$/);
  expect(env.PAYSAGA_DATABASE_PASSWORD).toMatch(/^[0-9a-f]{48}$/);
  expect(env.PAYSAGA_CODEC_TOKEN).toMatch(/^[A-Za-z0-9_-]{43}$/);
  // Its own permissions stay.
  expect(fs.statSync(envFile).mode & 0o777).toBe(0o640);
  expect(lines.slice(0, 2)).toEqual([
    `paysaga setup --compose: added to ${envFile}: PAYSAGA_CODEC_KEYS, PAYSAGA_RETURN_SECRETS, ` +
      'PAYSAGA_DATABASE_PASSWORD, PAYSAGA_CODEC_TOKEN (fresh random values)',
    `paysaga setup --compose: kept in ${envFile} as they were: POSTGRES_PASSWORD, PAYSAGA_API_TOKENS`,
  ]);
});
