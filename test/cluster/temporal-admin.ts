/**
 * What the cluster test asks of a Temporal cluster as an operator: registering paysaga (namespace and
 * search attributes) with `paysaga setup`, and through the Temporal CLI (the binary chosen by
 * cli/temporal-cli.ts) health, search attributes and visibility queries. Both read the standard
 * connection settings (TEMPORAL_ADDRESS, TLS, API key, profiles) from the environment they are given,
 * so the same calls work against a secured cluster.
 */
import { PAYSAGA_SEARCH_ATTRIBUTES, searchAttributeSpecs } from '../../common/search-attributes';
import { resolveTemporalCli } from '../../cli/temporal-cli';
import { PAYSAGA_BIN } from './paysaga-process';
import { CommandError, mustRun, runCommand, type RunResult } from './run';

export interface ClusterTarget {
  address: string;
  namespace: string;
  /** Environment of the CLI (and of paysaga's processes): the connection settings beyond the address. */
  env: NodeJS.ProcessEnv;
}

export function temporalCli(): string {
  const cli = resolveTemporalCli();
  if (!cli.path) throw new Error('no Temporal CLI: run `npm run setup` (or set TEMPORAL_CLI_PATH)');
  return cli.path;
}

function cliArgs(t: ClusterTarget, args: string[], withNamespace = true): string[] {
  return [...args, '--address', t.address, ...(withNamespace ? ['--namespace', t.namespace] : [])];
}

function cli(t: ClusterTarget, args: string[], withNamespace = true, timeoutMs = 30_000): Promise<RunResult> {
  return runCommand(temporalCli(), cliArgs(t, args, withNamespace), { env: t.env, timeoutMs });
}

function mustCli(t: ClusterTarget, args: string[], withNamespace = true): Promise<RunResult> {
  return mustRun(temporalCli(), cliArgs(t, args, withNamespace), { env: t.env, timeoutMs: 30_000 });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Until the frontend answers SERVING. `stillRunning()` false (the server exited) or the time running out
 * is an error carrying `describe()` (the server's log).
 */
export async function waitForHealthy(
  t: ClusterTarget,
  timeoutMs: number,
  stillRunning: () => boolean = () => true,
  describe: () => string = () => '',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    const res = await cli(t, ['operator', 'cluster', 'health', '--command-timeout', '3s'], false, 10_000);
    if (res.code === 0 && res.stdout.includes('SERVING')) return;
    last = `${res.stdout}${res.stderr}`.trim();
    if (!stillRunning()) throw new Error(`the Temporal server exited while starting:\n${describe()}`);
    if (Date.now() > deadline)
      throw new Error(
        `the Temporal server at ${t.address} is not healthy after ${timeoutMs} ms: ${last}\n${describe()}`,
      );
    await sleep(500);
  }
}

/** What registering reports: whether the run changed anything on the cluster. */
export interface Registration {
  changed: boolean;
}

/**
 * Registers what paysaga needs on the cluster: the namespace (when missing) and paysaga's search
 * attributes (those missing), idempotently, the way an operator does.
 */
export const registerPaysaga = registerWithPaysagaSetup;

/**
 * `paysaga setup --json` as a process of its own, connected by the standard TEMPORAL_* variables like
 * every other paysaga command (TLS and API keys of PAYSAGA_CLUSTER_ADDRESS's environment included). It
 * waits for a namespace it registered and for the attributes it added to be listed.
 */
export async function registerWithPaysagaSetup(t: ClusterTarget): Promise<Registration> {
  // 300 s: the first paysaga command of a run may build dist/ first (bin/paysaga.js) on a busy machine.
  const res = await mustRun(process.execPath, [PAYSAGA_BIN, 'setup', '--json'], {
    env: { ...t.env, TEMPORAL_ADDRESS: t.address, TEMPORAL_NAMESPACE: t.namespace },
    timeoutMs: 300_000,
  });
  const report = JSON.parse(res.stdout.trim().split('\n').pop() ?? '') as { changed?: unknown };
  if (typeof report.changed !== 'boolean')
    throw new Error(`paysaga setup --json printed no outcome: ${res.stdout}`);
  return { changed: report.changed };
}

/** Custom search attributes of the namespace: name -> type as the CLI spells it (`Keyword`, `Int`). */
export async function searchAttributes(t: ClusterTarget): Promise<Map<string, string>> {
  const res = await mustCli(t, ['operator', 'search-attribute', 'list', '--output', 'json']);
  const parsed = JSON.parse(res.stdout) as { customAttributes?: Record<string, string> };
  const types = new Map<string, string>();
  for (const [name, type] of Object.entries(parsed.customAttributes ?? {}))
    types.set(name, cliTypeName(type));
  return types;
}

/** `INDEXED_VALUE_TYPE_KEYWORD` / `Keyword` -> `Keyword`. */
function cliTypeName(type: string): string {
  const bare = type.replace(/^INDEXED_VALUE_TYPE_/, '').toLowerCase();
  const names: Record<string, string> = {
    text: 'Text',
    keyword: 'Keyword',
    int: 'Int',
    double: 'Double',
    bool: 'Bool',
    datetime: 'Datetime',
    keyword_list: 'KeywordList',
    keywordlist: 'KeywordList',
  };
  return names[bare] ?? type;
}

/**
 * Until a visibility query over every paysaga search attribute is accepted in the namespace: then the
 * frontend knows the namespace and the attributes (its caches refresh on their own schedule).
 */
export async function waitForSearchAttributes(t: ClusterTarget, timeoutMs: number): Promise<void> {
  const query = searchAttributeSpecs(PAYSAGA_SEARCH_ATTRIBUTES)
    .map((spec) => {
      const [name, type] = spec.split('=') as [string, string];
      // A value of the attribute's own type: the query is refused otherwise.
      const probe: Record<string, string> = {
        Int: '0',
        Double: '0',
        Bool: 'false',
        Datetime: "'2000-01-01T00:00:00Z'",
      };
      return `${name} = ${probe[type] ?? "'probe'"}`;
    })
    .join(' AND ');
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await cli(t, ['workflow', 'count', '--query', query]);
    if (res.code === 0) return;
    if (Date.now() > deadline)
      throw new Error(`the search attributes are not usable after ${timeoutMs} ms: ${res.stderr.trim()}`);
    await sleep(500);
  }
}

/**
 * `temporal workflow count --query`: how many workflows of the namespace match. Visibility requests are
 * rate limited per namespace (`frontend.namespaceRPS.visibility`, 10/s by default): a refusal is
 * waited out, as any client of a cluster must.
 */
export async function countWorkflows(t: ClusterTarget, query: string): Promise<number> {
  const args = ['workflow', 'count', '--query', query, '--output', 'json'];
  const deadline = Date.now() + 30_000;
  for (let pause = 200; ; pause = Math.min(pause * 2, 2_000)) {
    const res = await cli(t, args);
    if (res.code === 0) return Number((JSON.parse(res.stdout) as { count?: string | number }).count ?? 0);
    // A read: any failure (a visibility rate limit above all) is tried again until the deadline.
    if (Date.now() > deadline) throw new CommandError(`temporal ${args.join(' ')}`, res);
    await sleep(pause);
  }
}

/** The server's version as the cluster reports it (`temporal operator cluster describe`). */
export async function serverVersion(t: ClusterTarget): Promise<string> {
  const res = await mustCli(t, ['operator', 'cluster', 'describe', '--output', 'json'], false);
  return String((JSON.parse(res.stdout) as { serverVersion?: string }).serverVersion ?? '');
}

/** When the latest run of `workflowId` closed; undefined while it runs. */
export async function closeTime(t: ClusterTarget, workflowId: string): Promise<Date | undefined> {
  const res = await mustCli(t, ['workflow', 'describe', '--workflow-id', workflowId, '--output', 'json']);
  const info = (JSON.parse(res.stdout) as { workflowExecutionInfo?: { closeTime?: string } })
    .workflowExecutionInfo;
  return info?.closeTime ? new Date(info.closeTime) : undefined;
}
