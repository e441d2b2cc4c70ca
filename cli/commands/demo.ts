/**
 * `paysaga demo`: against a running stack (`paysaga dev`), runs every session kind end to end through
 * the HTTP API, shows progress, and prints a table of outcomes with a Temporal UI link per session.
 * Exit code 0 only when every kind ended as expected.
 */
import * as fs from 'node:fs';
import { InvalidArgumentError, type Command } from 'commander';
import { PaysagaApiClient } from '../../client/http';
import { temporalSettingsFromEnv } from '../../platform/temporal-config';
import { DEMO_KINDS, formatTable, runDemo, type DemoKind } from '../dev/demo';
import { processAlive, readApiToken, readDevState, resolveDataDir } from '../dev/data-dir';

export interface DemoOptions {
  data?: string;
  api?: string;
  token?: string;
  sandbox?: string;
  temporalUi?: string;
  only?: DemoKind[];
  timeout: number;
  json?: string;
}

export interface DemoCommandDeps {
  out: (line: string) => void;
  env: NodeJS.ProcessEnv;
}

const processDeps: DemoCommandDeps = {
  out: (line) => process.stdout.write(`${line}\n`),
  env: process.env,
};

export function register(program: Command, deps: DemoCommandDeps = processDeps): void {
  program
    .command('demo')
    .description(
      `against a running \`paysaga dev\`, run every session kind end to end through the HTTP API ` +
        `(${DEMO_KINDS.join(', ')}) and print a table of outcomes with Temporal UI links`,
    )
    .option('--data <dir>', 'data folder of the running `paysaga dev` (default PAYSAGA_DATA_DIR or .data)')
    .option(
      '--api <url>',
      'API base URL, where /v1 is served (default PAYSAGA_API_URL, else what `paysaga dev` wrote, else :8081)',
    )
    .option('--token <token>', 'API bearer token (default PAYSAGA_API_TOKEN, else <data>/api-token)')
    .option(
      '--sandbox <url>',
      'sandbox base URL (default PAYSAGA_SANDBOX_URL, else from `paysaga dev`, else :8090)',
    )
    .option(
      '--temporal-ui <url>',
      'Temporal UI base URL for the links (default from `paysaga dev`, else :8233)',
    )
    .option('--only <kinds>', `comma-separated subset of: ${DEMO_KINDS.join(', ')}`, parseKinds)
    .option('--timeout <seconds>', 'time each kind may take', parseSeconds, 120)
    .option('--json <file>', 'also write the results as JSON to this file')
    .action(async (opts: DemoOptions) => {
      const ok = await runDemoCommand(opts, deps);
      if (!ok) process.exitCode = 1;
    });
}

function parseKinds(value: string): DemoKind[] {
  const kinds = value
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean);
  const unknown = kinds.filter((k) => !(DEMO_KINDS as readonly string[]).includes(k));
  if (unknown.length || kinds.length === 0)
    throw new InvalidArgumentError(
      `unknown kind(s) ${unknown.join(', ')}; choose from ${DEMO_KINDS.join(', ')}`,
    );
  return kinds as DemoKind[];
}

function parseSeconds(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0)
    throw new InvalidArgumentError(`--timeout must be a positive number of seconds`);
  return n;
}

const trimSlash = (url: string) => url.replace(/\/+$/, '');

/** Returns true when every kind ended as expected. */
export async function runDemoCommand(
  opts: DemoOptions,
  deps: DemoCommandDeps = processDeps,
): Promise<boolean> {
  const env = deps.env;
  const dataDir = resolveDataDir(opts.data, env);
  const saved = readDevState(dataDir);
  const state = saved && processAlive(saved.pid) ? saved : undefined;
  const apiUrl = trimSlash(opts.api || env.PAYSAGA_API_URL || state?.apiUrl || 'http://127.0.0.1:8081');
  // /healthz is on the internal listener, which serves /v1 too unless PAYSAGA_V1_LISTENER=public.
  const healthUrl = trimSlash((!opts.api && !env.PAYSAGA_API_URL && state?.internalUrl) || apiUrl);
  const token = opts.token || env.PAYSAGA_API_TOKEN || readApiToken(dataDir);
  if (!token)
    throw new Error(
      `no API token: pass --token or PAYSAGA_API_TOKEN, or start \`paysaga dev\` (it writes ${dataDir}/api-token)`,
    );
  const sandboxUrl = trimSlash(
    opts.sandbox || env.PAYSAGA_SANDBOX_URL || state?.sandboxUrl || 'http://127.0.0.1:8090',
  );
  const temporalUiUrl = trimSlash(
    opts.temporalUi || state?.temporalUiUrl || env.PAYSAGA_TEMPORAL_UI_URL || 'http://127.0.0.1:8233',
  );
  // Links only: the namespace of the running dev stack, else the standard Temporal configuration's.
  const namespace = state?.namespace || temporalSettingsFromEnv(env).namespace;

  try {
    const health = await fetch(`${healthUrl}/healthz`, { signal: AbortSignal.timeout(5_000) });
    if (health.status !== 200)
      throw new Error(`GET /healthz answered ${health.status}: ${await health.text()}`);
  } catch (err) {
    throw new Error(
      `the API at ${apiUrl} is not ready (${(err as Error).message}); start the stack with \`npm start\` ` +
        '(paysaga dev), or point --api at it',
    );
  }

  const kinds = opts.only ?? DEMO_KINDS;
  deps.out(`paysaga demo: ${kinds.length} session kinds against ${apiUrl} (sandbox ${sandboxUrl})`);
  const started = Date.now();
  const width = Math.max(...kinds.map((k) => k.length));
  const api = new PaysagaApiClient({ baseUrl: apiUrl, token });
  const results = await runDemo(
    {
      api,
      sandboxUrl,
      temporalUiUrl,
      namespace,
      timeoutMs: opts.timeout * 1000,
      progress: (kind, message) => {
        const t = ((Date.now() - started) / 1000).toFixed(1).padStart(5);
        deps.out(`[${t}s] ${kind.padEnd(width)}  ${message}`);
      },
    },
    kinds,
  ).finally(() => api.close());

  deps.out('');
  for (const line of formatTable(results)) deps.out(line);
  const failed = results.filter((r) => !r.ok);
  deps.out('');
  deps.out(
    failed.length === 0
      ? `all ${results.length} kinds ended as expected in ${((Date.now() - started) / 1000).toFixed(1)} s`
      : `${failed.length} of ${results.length} kinds did not end as expected: ${failed.map((f) => f.kind).join(', ')}`,
  );
  if (opts.json) fs.writeFileSync(opts.json, `${JSON.stringify({ apiUrl, results }, null, 2)}\n`);
  return failed.length === 0;
}
