/**
 * `paysaga setup`: prepares the Temporal cluster of the standard configuration (TEMPORAL_* variables or
 * a profile, platform/temporal-config.ts) for paysaga: the namespace (registered when missing and
 * allowed) and paysaga's search attributes, idempotently (cli/temporal-setup.ts); and the store
 * (PAYSAGA_DATABASE_URL, store/config.ts): its schema brought to the latest migration. Run it before
 * the workers and the API, and again after every upgrade (new migrations, new search attributes).
 *
 * `paysaga setup --compose` instead writes the secrets docker-compose.yml needs into `.env`
 * (cli/compose-env.ts) and contacts nothing: the compose stack runs the cluster's setup itself.
 */
import { InvalidArgumentError, type Command } from 'commander';
import type { Connection } from '@temporalio/client';
import {
  describeTemporalSettings,
  temporalSettingsFromEnv,
  type TemporalSettings,
} from '../../platform/temporal-config';
import type * as TemporalConnection from '../../platform/temporal-connection';
import type * as TemporalSetup from '../temporal-setup';
import { describeStoreUrl, storeConfigFromEnv, type StoreConfig } from '../../store/config';
import type * as StoreDatabase from '../../store/database';
import type * as StoreErrors from '../../store/errors';
import { writeComposeEnv, type ComposeEnvReport } from '../compose-env';

export const DEFAULT_RETENTION_DAYS = 30;

export interface SetupCommandOptions {
  retention: number;
  wait: number;
  json?: boolean;
  compose?: boolean;
  envFile: string;
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
        "paysaga's search attributes; apply the store's migrations (PAYSAGA_DATABASE_URL); idempotent. " +
        'Temporal is configured by TEMPORAL_* / TEMPORAL_PROFILE',
    )
    .option(
      '--retention <days>',
      `retention of closed sessions in a namespace setup registers (keep it >= PAYSAGA_RECONCILE_WINDOW_MS)`,
      positive('--retention', 1),
      DEFAULT_RETENTION_DAYS,
    )
    .option(
      '--wait <seconds>',
      'keep trying to reach Temporal and the store this long (a cluster still starting, e.g. in docker compose)',
      positive('--wait', 0),
      0,
    )
    .option('--json', 'print the outcome as JSON on stdout (progress goes to stderr)')
    .option(
      '--compose',
      'instead: write the secrets docker-compose.yml needs into the env file, fresh and random, adding only ' +
        'missing ones (an existing value is never changed); then `docker compose up`',
    )
    .option('--env-file <path>', 'the env file --compose writes', '.env')
    .action(async (opts: SetupCommandOptions) => {
      if (opts.compose) runComposeSetup(opts, deps);
      else await runSetup(opts, deps);
    });
}

/** `paysaga setup --compose`: fills the env file's missing secrets and says which it added and kept. */
export function runComposeSetup(
  opts: Pick<SetupCommandOptions, 'envFile' | 'json'>,
  deps: SetupCommandDeps = processDeps,
): ComposeEnvReport {
  const report = writeComposeEnv(opts.envFile);
  if (opts.json) {
    deps.out(JSON.stringify(report));
    return report;
  }
  const log = (line: string) => deps.out(`paysaga setup --compose: ${line}`);
  const file = opts.envFile;
  if (report.added.length > 0)
    log(`${report.created ? 'wrote' : 'added to'} ${file}: ${report.added.join(', ')} (fresh random values)`);
  if (report.kept.length > 0) log(`kept in ${file} as they were: ${report.kept.join(', ')}`);
  if (report.added.length === 0) log(`${file} already has every secret: nothing to change`);
  log(
    `next: docker compose up -d --build (the API token, with every scope, is PAYSAGA_API_TOKENS in ${file}, ` +
      'before its ":")',
  );
  return report;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function connectWithin(settings: TemporalSettings, waitSeconds: number, log: (l: string) => void) {
  // Loaded lazily so `paysaga --help` starts without the Temporal client.
  const { connectTemporalClient } =
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    require('../../platform/temporal-connection') as typeof TemporalConnection;
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

/** What setup did to the store: the migrations this run applied (none: it was up to date). */
export interface StoreSetupReport {
  schema: string;
  applied: string[];
}

export type SetupCommandReport = TemporalSetup.SetupReport & {
  /** null: PAYSAGA_DATABASE_URL is not set, so no store was migrated. */
  store: StoreSetupReport | null;
};

/** Applies the store's pending migrations, waiting up to `waitSeconds` for a store still starting. */
async function migrateWithin(
  config: StoreConfig,
  waitSeconds: number,
  log: (l: string) => void,
): Promise<StoreSetupReport> {
  // Loaded lazily so `paysaga --help` starts without the database driver.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { migrateStore, openStore } = require('../../store/database') as typeof StoreDatabase;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { isStoreUnavailable } = require('../../store/errors') as typeof StoreErrors;
  const store = openStore({ ...config, poolSize: 1 }, { applicationName: 'paysaga-setup' });
  const deadline = Date.now() + waitSeconds * 1000;
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        const result = await migrateStore(store);
        const applied = (result.results ?? [])
          .filter((r) => r.status === 'Success')
          .map((r) => r.migrationName);
        return { schema: config.schema, applied };
      } catch (err) {
        if (!isStoreUnavailable(err) || Date.now() > deadline) throw err;
        if (attempt === 1) log(`waiting up to ${waitSeconds} s for the store (${(err as Error).message})`);
        await sleep(2_000);
      }
    }
  } finally {
    await store.close();
  }
}

/** Runs setup and prints what it did; throws (exit code 1) when the cluster or store cannot be set up. */
export async function runSetup(
  opts: SetupCommandOptions,
  deps: SetupCommandDeps = processDeps,
): Promise<SetupCommandReport> {
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
  const storeConfig = storeConfigFromEnv(deps.env);
  let store: StoreSetupReport | null = null;
  if (!storeConfig) {
    log('PAYSAGA_DATABASE_URL is not set: no store to migrate (`paysaga dev` migrates its embedded one)');
  } else {
    log(`store ${describeStoreUrl(storeConfig.url)}, schema ${storeConfig.schema}`);
    store = await migrateWithin(storeConfig, opts.wait, log);
    log(
      store.applied.length
        ? `store: applied ${store.applied.join(', ')}`
        : 'store: every migration applied already',
    );
  }
  const changed = report.changed || Boolean(store?.applied.length);
  log(changed ? 'done' : 'nothing to change, done');
  const full: SetupCommandReport = { ...report, changed, store };
  if (opts.json) deps.out(JSON.stringify(full));
  return full;
}
