/** `paysaga keys generate --out DIR [--force]` */
import type { Command } from 'commander';
import { generateKeys } from '../keys';

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
    .action(async (opts: { out: string; force: boolean }) => {
      const result = await generateKeys({ outDir: opts.out, force: opts.force });
      if (result.warning) console.error(`warning: ${result.warning}`);
      console.log(`wrote keys to ${result.outDir}:`);
      for (const file of Object.values(result.files)) console.log(`  ${file}`);
    });
}
