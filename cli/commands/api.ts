/** `paysaga api`: the HTTP API alone, configured by environment variables (api/README.md), until SIGINT/SIGTERM. */
import type { Command } from 'commander';
import type { RunningApi, StartApiOptions, startApiFromEnv as StartApiFromEnv } from '../../api/server';

/** The process seams, replaceable so a test can run the command in-process and "send" it a signal. */
export interface ApiCommandDeps {
  signals: Pick<NodeJS.EventEmitter, 'once' | 'removeListener'>;
  out: (line: string) => void;
  err: (line: string) => void;
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

  const signal = await new Promise<string>((resolve) => {
    const on = (name: string) => () => {
      deps.signals.removeListener('SIGINT', onInt);
      deps.signals.removeListener('SIGTERM', onTerm);
      resolve(name);
    };
    const onInt = on('SIGINT');
    const onTerm = on('SIGTERM');
    deps.signals.once('SIGINT', onInt);
    deps.signals.once('SIGTERM', onTerm);
  });
  deps.err(`api: ${signal}, shutting down`);
  // A second signal while closing means "now": do not wait for in-flight requests.
  const force = () => {
    deps.err('api: forced exit');
    process.exit(1);
  };
  deps.signals.once('SIGINT', force);
  deps.signals.once('SIGTERM', force);
  try {
    await api.close();
  } finally {
    deps.signals.removeListener('SIGINT', force);
    deps.signals.removeListener('SIGTERM', force);
  }
  deps.err('api: stopped');
}
