/**
 * `paysaga keys generate --out DIR [--force | --if-missing]`
 * `paysaga keys fingerprint <pem file>...`
 * `paysaga keys withdraw <fingerprint | pem file> [--list FILE | --data DIR] [--reason TEXT]`
 */
import { createPublicKey } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Command } from 'commander';
import {
  isKeyFingerprint,
  keyFingerprint,
  WITHDRAWN_KEYS_CHECK_MS,
  withdrawKey,
} from '../../provider/withdrawn-keys';
import { resolveDataDir, WITHDRAWN_KEYS_FILE } from '../dev/data-dir';
import { generateKeys, KEY_FILES } from '../keys';

/** The fingerprint of a PEM file's public key (a private key's public half), or the argument itself. */
function fingerprintOf(arg: string): string {
  if (isKeyFingerprint(arg.toLowerCase())) return arg.toLowerCase();
  let pem: string;
  try {
    pem = fs.readFileSync(arg, 'utf8');
  } catch {
    throw new Error(`${arg}: neither a key fingerprint (sha256:<64 hex digits>) nor a readable PEM file`);
  }
  return keyFingerprint(createPublicKey(pem));
}

/** Where the withdrawn-keys list is: --list, else PAYSAGA_WITHDRAWN_KEYS, else `<data>/withdrawn-keys`. */
function listFile(opts: { list?: string; data?: string }, env: NodeJS.ProcessEnv): string {
  if (opts.list) return path.resolve(opts.list);
  if (env.PAYSAGA_WITHDRAWN_KEYS?.trim()) return path.resolve(env.PAYSAGA_WITHDRAWN_KEYS.trim());
  if (opts.data !== undefined) return path.join(resolveDataDir(opts.data, env), WITHDRAWN_KEYS_FILE);
  throw new Error(
    'which list? --list <file> (the PAYSAGA_WITHDRAWN_KEYS of the workers and APIs), or --data <dir> for paysaga dev',
  );
}

export function register(program: Command): void {
  const keys = program.command('keys').description('manage RSA keys for the partner and the sandbox service');

  keys
    .command('generate')
    .description(
      'generate RSA-2048 key pairs: partner_{private,public}.pem and service_{private,public}.pem ' +
        '(PKCS#8 / SPKI PEM; directory 0700, private keys 0600)',
    )
    .option('--out <dir>', 'directory to write the keys to', 'keys')
    .option('--force', 'overwrite existing key files', false)
    .option(
      '--if-missing',
      'do nothing when all four files exist (a container start that must not replace keys)',
      false,
    )
    .action(async (opts: { out: string; force: boolean; ifMissing: boolean }) => {
      const files = Object.values(KEY_FILES).map((name) => path.join(opts.out, name));
      if (opts.ifMissing && !opts.force && files.every((file) => fs.existsSync(file))) {
        console.log(`keys present in ${path.resolve(opts.out)}: left as they are`);
        return;
      }
      const result = await generateKeys({ outDir: opts.out, force: opts.force });
      if (result.warning) console.error(`warning: ${result.warning}`);
      console.log(`wrote keys to ${result.outDir}:`);
      for (const file of Object.values(result.files)) console.log(`  ${file}`);
    });

  keys
    .command('fingerprint')
    .description('print the fingerprint (sha256 of the public key, SPKI DER) of each PEM file given')
    .argument('<pem...>', 'public or private key files')
    .action((files: string[]) => {
      for (const file of files) console.log(`${fingerprintOf(file)}  ${file}`);
    });

  keys
    .command('withdraw')
    .description(
      'withdraw a provider service key: add it to the withdrawn-keys list (PAYSAGA_WITHDRAWN_KEYS) that ' +
        'every worker and API re-reads; from then on no webhook signed with it is believed (no restart)',
    )
    .argument('<key>', 'the key: its fingerprint (sha256:...) or a PEM file of it')
    .option('--list <file>', 'the withdrawn-keys list (default: PAYSAGA_WITHDRAWN_KEYS)')
    .option('--data <dir>', "paysaga dev's data folder: its list, <data>/withdrawn-keys")
    .option('--reason <text>', 'a note kept next to it in the list', '')
    .action((key: string, opts: { list?: string; data?: string; reason: string }) => {
      const fingerprint = fingerprintOf(key);
      const file = listFile(opts, process.env);
      const note = `withdrawn ${new Date().toISOString()}${opts.reason ? `: ${opts.reason}` : ''}`;
      const added = withdrawKey(file, fingerprint, note);
      console.log(
        added
          ? `withdrawn ${fingerprint} in ${file}: every worker and API reading it refuses the key within ` +
              `${WITHDRAWN_KEYS_CHECK_MS / 1000} s`
          : `${fingerprint} is already withdrawn in ${file}`,
      );
    });
}
