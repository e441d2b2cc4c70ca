/**
 * `paysaga setup`: prepares the Temporal cluster of the standard configuration (TEMPORAL_* variables or
 * a profile, common/temporal-config.ts) for paysaga: the namespace (registered when missing and
 * allowed) and paysaga's search attributes, idempotently (cli/temporal-setup.ts). Run it once per
 * namespace before the workers and the API, and again after an upgrade that adds search attributes.
 */
import { InvalidArgumentError, type Command } from 'commander';
import type { Connection } from '@temporalio/client';
import {
  describeTemporalSettings,
  temporalSettingsFromEnv,
  type TemporalSettings,
} from '../../common/temporal-config';
import type * as TemporalConnection from '../../common/temporal-connection';
import type * as TemporalSetup from '../temporal-setup';

export const DEFAULT_RETENTION_DAYS = 30;

export interface SetupCommandOptions {
  retention: number;
  wait: number;
  json?: boolean;
}

export interface SetupCommandDeps {
  out: (line: string) => void;
  err: (line: string) => void;
  env: NodeJS.ProcessEnv;
}

const processDeps: SetupCommandDeps = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  env: process.env,
};

function positive(what: string, min: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min)
      throw new InvalidArgumentError(`${what} must be an integer >= ${min}`);
    return n;
  };
}

export function register(program: Command, deps: SetupCommandDeps = processDeps): void {
  program
    .command('setup')
    .description(
      'prepare the Temporal namespace for paysaga: register it when missing (if the server allows), add ' +
        "paysaga's search attributes; idempotent. Temporal is configured by TEMPORAL_* / TEMPORAL_PROFILE",
    )
    .option(
      '--retention <days>',
      `retention of closed sessions in a namespace setup registers (keep it >= PAYSAGA_RECONCILE_WINDOW_MS)`,
      positive('--retention', 1),
      DEFAULT_RETENTION_DAYS,
    )
    .option(
      '--wait <seconds>',
      'keep trying to reach Temporal this long (a cluster still starting, e.g. in docker compose)',
      positive('--wait', 0),
      0,
    )
    .option('--json', 'print the outcome as JSON on stdout (progress goes to stderr)')
    .action(async (opts: SetupCommandOptions) => {
      await runSetup(opts, deps);
    });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function connectWithin(settings: TemporalSettings, waitSeconds: number, log: (l: string) => void) {
  // Loaded lazily so `paysaga --help` starts without the Temporal client.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { connectTemporalClient } = require('../../common/temporal-connection') as typeof TemporalConnection;
  const deadline = Date.now() + waitSeconds * 1000;
  for (let attempt = 1; ; attempt++) {
    try {
      // Without --wait: one attempt with the SDK's own timeout (a remote cluster may be slow to answer).
      const left = deadline - Date.now();
      return await connectTemporalClient(
        settings,
        waitSeconds > 0 ? { connectTimeoutMs: Math.max(1_000, Math.min(5_000, left)) } : {},
      );
    } catch (err) {
      if (Date.now() > deadline) throw err;
      if (attempt === 1) log(`waiting up to ${waitSeconds} s for Temporal (${(err as Error).message})`);
      await sleep(2_000);
    }
  }
}

/** Runs setup and prints what it did; throws (exit code 1) when the cluster cannot be set up. */
export async function runSetup(
  opts: SetupCommandOptions,
  deps: SetupCommandDeps = processDeps,
): Promise<TemporalSetup.SetupReport> {
  const settings = temporalSettingsFromEnv(deps.env);
  const progress = opts.json ? deps.err : deps.out;
  const log = (line: string) => progress(`paysaga setup: ${line}`);
  log(`Temporal ${describeTemporalSettings(settings)}`);
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { setupTemporal } = require('../temporal-setup') as typeof TemporalSetup;
  const connection: Connection = await connectWithin(settings, opts.wait, log);
  let report: TemporalSetup.SetupReport;
  try {
    report = await setupTemporal(connection, {
      namespace: settings.namespace,
      retentionDays: opts.retention,
      log,
    });
  } finally {
    await connection.close();
  }
  log(report.changed ? 'done' : 'nothing to change, done');
  if (opts.json) deps.out(JSON.stringify(report));
  return report;
}
