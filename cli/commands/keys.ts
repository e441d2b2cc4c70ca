/** `paysaga keys generate --out DIR [--force | --if-missing]` */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Command } from 'commander';
import { generateKeys, KEY_FILES } from '../keys';

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
}
