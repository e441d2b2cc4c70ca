/**
 * A throwaway Temporal dev server for a test run or a benchmark: the CLI chosen by cli/temporal-cli.ts,
 * in memory, on 127.0.0.1 (free port), with paysaga's namespace and search attributes registered.
 */
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { describeTemporalCli, resolveTemporalCli, toServerExecutable } from '../../cli/temporal-cli';
import { DEV_SERVER_DYNAMIC_CONFIG } from '../../cli/dev/temporal-server';
import { DEFAULT_TEMPORAL_NAMESPACE, PAYSAGA_SEARCH_ATTRIBUTES } from '../../common/search-attributes';

export interface LocalTemporal {
  env: TestWorkflowEnvironment;
  namespace: string;
  /** Which CLI binary runs it, for logs. */
  cli: string;
}

export async function startLocalTemporal(o: { extraArgs?: string[] } = {}): Promise<LocalTemporal> {
  const cli = resolveTemporalCli();
  const namespace = DEFAULT_TEMPORAL_NAMESPACE;
  try {
    const env = await TestWorkflowEnvironment.createLocal({
      server: {
        executable: toServerExecutable(cli),
        ip: '127.0.0.1',
        namespace,
        searchAttributes: PAYSAGA_SEARCH_ATTRIBUTES,
        log: { format: 'pretty', level: 'error' },
        extraArgs: [...DEV_SERVER_DYNAMIC_CONFIG, ...(o.extraArgs ?? [])],
      },
    });
    return { env, namespace, cli: describeTemporalCli(cli) };
  } catch (err) {
    throw new Error(
      `Could not start the Temporal dev server with ${describeTemporalCli(cli)}: ${(err as Error).message}\n` +
        'Run `npm run setup` (installs the pinned CLI into .tools/) or set TEMPORAL_CLI_PATH.',
      { cause: err },
    );
  }
}
