/** `paysaga api`: the HTTP API alone, configured by environment variables (api/README.md), until SIGINT/SIGTERM. */
import type { Command } from 'commander';
import { closeOnSignal, type ServerCommandDeps } from '../shutdown';
import type { RunningApi, StartApiOptions, startApiFromEnv as StartApiFromEnv } from '../../api/server';

/** The process seams, replaceable so a test can run the command in-process and "send" it a signal. */
export interface ApiCommandDeps extends ServerCommandDeps {
  env: NodeJS.ProcessEnv;
}

const processDeps: ApiCommandDeps = {
  signals: process,
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  env: process.env,
};

export function register(program: Command, deps: ApiCommandDeps = processDeps): void {
  program
    .command('api')
    .description(
      'run the HTTP API (partner routes, provider webhooks, payer return page, /docs, /metrics); ' +
        'configured by TEMPORAL_*, PAYSAGA_* environment variables',
    )
    .option('--port <n>', 'port to listen on (default PAYSAGA_API_PORT or 8080; 0 picks a free one)')
    .option('--host <host>', 'address to listen on (default PAYSAGA_API_HOST or 127.0.0.1)')
    .action(async (opts: { port?: string; host?: string }) => {
      await runApi(opts, deps);
      // The process should now end by itself; should a stray handle keep it alive, do not hang on shutdown.
      if (deps === processDeps) setTimeout(() => process.exit(), 3_000).unref();
    });
}

/** Starts the API and resolves once it has shut down after SIGINT or SIGTERM. */
export async function runApi(
  opts: { port?: string; host?: string },
  deps: ApiCommandDeps = processDeps,
): Promise<void> {
  const o: StartApiOptions = {};
  if (opts.port !== undefined) {
    const n = Number(opts.port);
    if (!Number.isInteger(n) || n < 0 || n > 65_535)
      throw new Error(`--port must be an integer 0..65535, got ${opts.port}`);
    o.port = n;
  }
  if (opts.host !== undefined) o.host = opts.host;
  // Loaded lazily so the other commands start without fastify and the Temporal client.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { startApiFromEnv } = require('../../api/server') as { startApiFromEnv: typeof StartApiFromEnv };
  const api: RunningApi = await startApiFromEnv(deps.env, o);
  deps.out(`paysaga API listening on ${api.url} (docs: ${api.url}/docs)`);

  await closeOnSignal('api', deps, () => api.close());
}
