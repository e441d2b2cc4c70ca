/**
 * `paysaga sandbox --config FILE [--port N] [--host H] [--data DIR]`: run the provider emulator until
 * SIGINT/SIGTERM. With --data it keeps its state in DIR/sandbox.sqlite and continues from there on the
 * next start; without, in memory.
 */
import { InvalidArgumentError, type Command } from 'commander';
import { resolve } from 'node:path';
import pino from 'pino';
import { loadSandboxConfigFile } from '../../sandbox/config';
import type { startSandbox as StartSandboxFn } from '../../sandbox/index';
import { closeOnSignal, type ServerCommandDeps } from '../shutdown';

export const DEFAULT_SANDBOX_PORT = 8090;
export const DEFAULT_SANDBOX_HOST = '127.0.0.1';

type StartSandbox = typeof StartSandboxFn;
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
type LogLevel = (typeof LOG_LEVELS)[number];

export interface SandboxCommandOptions {
  config: string;
  port: number;
  host: string;
  logLevel: LogLevel;
  data?: string;
}

/** The process seams, replaceable so a test can run the command in-process and "send" it a signal. */
export type SandboxCommandDeps = ServerCommandDeps;

const processDeps: SandboxCommandDeps = {
  signals: process,
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

export function register(program: Command, deps: SandboxCommandDeps = processDeps): void {
  program
    .command('sandbox')
    .description(
      'run the stateful sandbox of the Payment Session Service (signed API, webhooks, fault injection)',
    )
    .requiredOption(
      '--config <file>',
      'sandbox config JSON (keys, projects, timeScale, ...); key paths are relative to it',
    )
    .option('--port <n>', `port to listen on (0 picks a free one)`, parsePort, DEFAULT_SANDBOX_PORT)
    .option('--host <host>', 'address to listen on', DEFAULT_SANDBOX_HOST)
    .option(
      '--data <dir>',
      'keep the state in <dir>/sandbox.sqlite: sessions, tokens, ledger, pending steps and webhooks survive a restart (default: in memory)',
    )
    .option(
      '--log-level <level>',
      `server log level on stderr (${LOG_LEVELS.join(', ')}); info logs every request`,
      parseLogLevel,
      'warn' as LogLevel,
    )
    .action(async (opts: SandboxCommandOptions) => {
      await runSandbox(opts, deps);
      // The process should now end by itself; should a stray handle keep it alive, do not hang on shutdown.
      if (deps === processDeps) setTimeout(() => process.exit(), 3_000).unref();
    });
}

/** Starts the sandbox and resolves once it has shut down after SIGINT or SIGTERM. */
export async function runSandbox(
  opts: SandboxCommandOptions,
  deps: SandboxCommandDeps = processDeps,
): Promise<void> {
  const config = loadSandboxConfigFile(opts.config);
  // Logs go to stderr so stdout carries only what the command itself says (the URL first).
  const logger = pino({ level: opts.logLevel, base: { service: 'sandbox' } }, pino.destination(2));
  const sandbox = await startSandbox()(config, {
    port: opts.port,
    host: opts.host,
    logger,
    ...(opts.data ? { dataDir: resolve(opts.data) } : {}),
  });
  deps.out(`sandbox listening on ${sandbox.url}`);
  deps.out(`  projects: ${[...sandbox.config.projects.keys()].join(', ')}; timeScale ${config.timeScale}`);
  deps.out(`  state: ${sandbox.store.durable ? sandbox.store.location : 'in memory (--data keeps it)'}`);

  await closeOnSignal('sandbox', deps, () => sandbox.close());
}

function parseLogLevel(value: string): LogLevel {
  if (!(LOG_LEVELS as readonly string[]).includes(value))
    throw new InvalidArgumentError(`--log-level must be one of ${LOG_LEVELS.join(', ')}`);
  return value as LogLevel;
}

function parsePort(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65_535)
    throw new InvalidArgumentError(`--port must be an integer 0..65535, got ${value}`);
  return n;
}

/** sandbox/index.ts is loaded lazily so the other commands start without the sandbox's server code. */
function startSandbox(): StartSandbox {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require('../../sandbox/index') as { startSandbox: StartSandbox }).startSandbox;
}
