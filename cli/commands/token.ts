/** `paysaga token create --scope read,payments`: a new API token and its PAYSAGA_API_TOKENS entry. */
import type { Command } from 'commander';
import { createApiToken, parseScopes, SCOPES } from '../../api/api-tokens';

export function register(program: Command): void {
  const token = program.command('token').description('API tokens for /v1 (PAYSAGA_API_TOKENS)');

  token
    .command('create')
    .description(
      'make a token (pst_<id>_<43 random characters>) and print the PAYSAGA_API_TOKENS entry that grants ' +
        `its scopes: ${SCOPES.join(', ')}`,
    )
    .requiredOption('--scope <scopes>', `comma-separated: ${SCOPES.join(', ')}`)
    .action((opts: { scope: string }) => {
      const scopes = parseScopes(opts.scope.replace(/,/g, '+'), '--scope');
      const made = createApiToken(scopes);
      console.log(`token     ${made.token}`);
      console.log(`id        ${made.id}  (what logs name it by)`);
      console.log(`scopes    ${scopes.join(', ')}`);
      console.log(`add to PAYSAGA_API_TOKENS (comma-separated with the others):`);
      console.log(made.entry);
    });
}
