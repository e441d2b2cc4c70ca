/**
 * `paysaga export sessions|events|refunds --from <time> [--to <time>] [--format csv|jsonl] [--out file]`:
 * records of a time window for accounting, streamed from the store (client/exports.ts) in constant
 * memory: pages of rows, each written before the next is read, waiting whenever the output is slow. A
 * progress bar goes to stderr when it is a terminal.
 *
 * The store: PAYSAGA_DATABASE_URL (and PAYSAGA_DATABASE_SCHEMA), else the embedded store of the running
 * `paysaga dev` of the data folder.
 */
import * as fs from 'node:fs';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { InvalidArgumentError, Option, type Command } from 'commander';
import type * as Exports from '../../client/exports';
import { DEFAULT_SCHEMA, storeConfigFromEnv, type StoreConfig } from '../../store/config';
import type * as StoreDatabase from '../../store/database';
import { processAlive, readDevState, resolveDataDir } from '../dev/data-dir';

const KINDS = ['sessions', 'events', 'refunds'] as const;
type Kind = (typeof KINDS)[number];

export interface ExportOptions {
  from: Date;
  to?: Date;
  format: 'csv' | 'jsonl';
  out?: string;
  data?: string;
}

export interface ExportCommandDeps {
  stdout: Writable;
  /** Progress and the closing line. */
  err: (line: string) => void;
  /** Progress bar updates (in place) when set: stderr is a terminal. */
  progress?: (line: string) => void;
  env: NodeJS.ProcessEnv;
}

const processDeps = (): ExportCommandDeps => ({
  stdout: process.stdout,
  err: (line) => process.stderr.write(`${line}\n`),
  ...(process.stderr.isTTY ? { progress: (line: string) => process.stderr.write(`\r${line}`) } : {}),
  env: process.env,
});

/** An ISO date (`2026-10-01`, midnight UTC) or date-time with its offset. */
export function parseTime(value: string): Date {
  const ok = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/.test(value);
  const t = Date.parse(value);
  if (!ok || Number.isNaN(t))
    throw new InvalidArgumentError(
      'an ISO date (2026-10-01) or date-time with offset (2026-10-01T00:00:00Z)',
    );
  return new Date(t);
}

export function register(program: Command, deps?: ExportCommandDeps): void {
  program
    .command('export')
    .description("records of a time window for accounting, streamed from paysaga's store")
    .addArgument(program.createArgument('<records>', 'what to export').choices(KINDS as unknown as string[]))
    .requiredOption('--from <time>', 'from this ISO date or date-time (inclusive)', parseTime)
    .option('--to <time>', 'until this ISO date or date-time (exclusive; default: now)', parseTime)
    .addOption(new Option('--format <format>', 'output format').choices(['csv', 'jsonl']).default('csv'))
    .option('--out <file>', 'write to this file instead of stdout')
    .option('--data <dir>', 'data folder of a running `paysaga dev` (when PAYSAGA_DATABASE_URL is unset)')
    .action(async (records: Kind, opts: ExportOptions) => {
      await runExport(records, opts, deps ?? processDeps());
    });
}

function storeConfigFor(opts: ExportOptions, env: NodeJS.ProcessEnv): StoreConfig {
  const configured = storeConfigFromEnv(env);
  if (configured) return { ...configured, poolSize: 1 };
  const dataDir = resolveDataDir(opts.data, env);
  const dev = readDevState(dataDir);
  if (dev?.databaseUrl && processAlive(dev.pid))
    return { url: dev.databaseUrl, schema: DEFAULT_SCHEMA, poolSize: 1 };
  throw new Error(
    `no store: set PAYSAGA_DATABASE_URL (and PAYSAGA_DATABASE_SCHEMA), or start \`paysaga dev\` (data folder ${dataDir})`,
  );
}

const BAR = 30;
function bar(done: number, total: number): string {
  const share = total > 0 ? Math.min(1, done / total) : 1;
  const filled = Math.round(share * BAR);
  return `[${'#'.repeat(filled)}${' '.repeat(BAR - filled)}] ${done}/${total} (${Math.round(share * 100)}%)`;
}

/** Writes the window's records; resolves with the number of rows written. */
export async function runExport(kind: Kind, opts: ExportOptions, deps: ExportCommandDeps): Promise<number> {
  const to = opts.to ?? new Date();
  if (opts.from.getTime() >= to.getTime()) throw new Error('--from must be before --to');
  // Loaded lazily so `paysaga --help` starts without the database driver.
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { openStore } = require('../../store/database') as typeof StoreDatabase;
  const exports = require('../../client/exports') as typeof Exports;
  /* eslint-enable @typescript-eslint/no-require-imports */
  const { countExport, csvLine, EXPORT_COLUMNS, exportRows } = exports;
  const store = openStore(storeConfigFor(opts, deps.env), { applicationName: 'paysaga-export' });
  const out: Writable = opts.out ? fs.createWriteStream(opts.out, { mode: 0o600 }) : deps.stdout;
  const write = async (line: string) => {
    if (!out.write(`${line}\n`)) await once(out, 'drain');
  };
  let written = 0;
  try {
    const window = { from: opts.from, to };
    const total = deps.progress ? await countExport(store, kind, window) : 0;
    if (opts.format === 'csv') await write(EXPORT_COLUMNS[kind].join(','));
    for await (const row of exportRows(store, kind, window)) {
      await write(opts.format === 'csv' ? csvLine(kind, row) : JSON.stringify(row));
      written++;
      if (deps.progress && (written % 200 === 0 || written === total)) deps.progress(bar(written, total));
    }
    if (deps.progress) deps.progress(`${bar(written, Math.max(total, written))}\n`);
  } finally {
    await store.close();
    if (opts.out) {
      out.end();
      await once(out, 'finish');
    }
  }
  deps.err(
    `paysaga export: ${written} ${kind} from ${opts.from.toISOString()} to ${to.toISOString()}` +
      (opts.out ? ` written to ${opts.out}` : ''),
  );
  return written;
}
