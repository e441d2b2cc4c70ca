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

export interface ApiFlags {
  publicPort?: string;
  publicHost?: string;
  internalPort?: string;
  internalHost?: string;
}

export function register(program: Command, deps: ApiCommandDeps = processDeps): void {
  program
    .command('api')
    .description(
      'run the HTTP API on two listeners: public (provider webhooks, payer return page) and internal ' +
        '(/v1 by default, /docs, /metrics, /healthz, /codec); configured by TEMPORAL_*, PAYSAGA_* environment variables',
    )
    .option('--public-port <n>', 'public port (default PAYSAGA_PUBLIC_PORT or 8080; 0 picks a free one)')
    .option('--public-host <host>', 'public address (default PAYSAGA_PUBLIC_HOST or 127.0.0.1)')
    .option(
      '--internal-port <n>',
      'internal port (default PAYSAGA_INTERNAL_PORT or 8081; 0 picks a free one)',
    )
    .option('--internal-host <host>', 'internal address (default PAYSAGA_INTERNAL_HOST or 127.0.0.1)')
    .action(async (opts: ApiFlags) => {
      await runApi(opts, deps);
      // The process should now end by itself; should a stray handle keep it alive, do not hang on shutdown.
      if (deps === processDeps) setTimeout(() => process.exit(), 3_000).unref();
    });
}

function portFlag(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65_535)
    throw new Error(`${flag} must be an integer 0..65535, got ${value}`);
  return n;
}

const address = (port: number | undefined, host: string | undefined) => ({
  ...(port !== undefined ? { port } : {}),
  ...(host !== undefined ? { host } : {}),
});

/** Starts the API and resolves once it has shut down after SIGINT or SIGTERM. */
export async function runApi(opts: ApiFlags, deps: ApiCommandDeps = processDeps): Promise<void> {
  const o: StartApiOptions = {
    public: address(portFlag('--public-port', opts.publicPort), opts.publicHost),
    internal: address(portFlag('--internal-port', opts.internalPort), opts.internalHost),
  };
  // Loaded lazily so the other commands start without fastify and the Temporal client.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { startApiFromEnv } = require('../../api/server') as { startApiFromEnv: typeof StartApiFromEnv };
  const api: RunningApi = await startApiFromEnv(deps.env, o);
  deps.out(`paysaga API public listener on ${api.publicUrl} (/webhooks/provider, /return/{sessionId})`);
  deps.out(
    `paysaga API internal listener on ${api.internalUrl} (/healthz, /metrics, /docs, /openapi.json, /codec)`,
  );
  deps.out(`paysaga API partner routes on ${api.url}/v1 (docs: ${api.internalUrl}/docs)`);
  if (api.returnBaseUrl)
    deps.out(
      `payer returns: back_url ${api.returnBaseUrl.replace(/\/+$/, '')}/return/<session id>?t=<token>`,
    );

  await closeOnSignal('api', deps, () => api.close());
}
