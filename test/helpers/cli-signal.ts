/**
 * `temporal workflow signal` with a plain JSON payload: what an operator or an intruder who reaches the
 * namespace can send, without paysaga's codec keys or the provider's.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { resolveTemporalCli } from '../../cli/temporal-cli';
import { testAddress, testNamespace } from './temporal';

const run = promisify(execFile);

export async function cliSignal(workflowId: string, name: string, payload: unknown): Promise<void> {
  const cli = resolveTemporalCli().path;
  if (!cli) throw new Error('no Temporal CLI binary (npm run setup installs one under .tools/)');
  await run(cli, [
    'workflow',
    'signal',
    '--address',
    testAddress(),
    '--namespace',
    testNamespace(),
    '--workflow-id',
    workflowId,
    '--name',
    name,
    '--input',
    JSON.stringify(payload),
  ]);
}
