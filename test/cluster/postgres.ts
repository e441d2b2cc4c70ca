/**
 * A throwaway PostgreSQL server for the cluster test: Debian's `postgresql` package (any version with
 * `initdb`), a new data folder in the test's temp folder, 127.0.0.1 on a free port, `trust`
 * authentication (nothing but this machine reaches it), durability off (a test database).
 *
 * PostgreSQL refuses to run as root: as root every server command runs as the `postgres` user (made by
 * the Debian package) through `runuser`, and the folder it writes is given to that user.
 *
 * The binaries: PAYSAGA_PG_BIN (a folder with initdb and pg_ctl) if set, else the newest
 * /usr/lib/postgresql/<version>/bin, else initdb and pg_ctl on PATH.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import pg from 'pg';
import { freePort } from '../../cli/dev/ports';
import { mustRun, runCommand } from './run';

export interface Postgres {
  host: string;
  port: number;
  /** Superuser; any password is accepted (trust). */
  user: string;
  version: string;
  /** The server's log file. */
  log: string;
  /** Fast shutdown, SIGKILL if that fails. The data folder is left for the caller's temp folder removal. */
  stop(): Promise<void>;
  /** Synchronous last resort (process exit): SIGQUIT (immediate shutdown) to the postmaster. */
  killNow(): void;
  /** The postmaster's pid (a new one after `up`). */
  readonly pid: number;
  /** An outage: the server stops (`fast`: clients are cut off, or `immediate`: a crash) and stays down. */
  down(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Starts it again on its data folder and port (after `down`). */
  up(): Promise<void>;
}

const DEBIAN_PG = '/usr/lib/postgresql';

export function findPostgresBin(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.PAYSAGA_PG_BIN) return env.PAYSAGA_PG_BIN;
  try {
    const versions = fs
      .readdirSync(DEBIAN_PG)
      .filter((v) => fs.existsSync(path.join(DEBIAN_PG, v, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return path.join(DEBIAN_PG, versions[0], 'bin');
  } catch {
    // not Debian's layout
  }
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (dir && fs.existsSync(path.join(dir, 'initdb'))) return dir;
  }
  return undefined;
}

const asRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

/** `cmd args` as the postgres user when we are root, else as ourselves. */
function asPostgres(cmd: string, args: string[]): [string, string[]] {
  return asRoot() ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
}

/** Starts PostgreSQL with its data under `dir` (created; given to the postgres user when root). */
export async function startPostgres(dir: string): Promise<Postgres> {
  const bin = findPostgresBin();
  if (!bin)
    throw new Error(
      'PostgreSQL is not installed: `apt-get install -y postgresql` (Debian), or set PAYSAGA_PG_BIN to the ' +
        'folder holding initdb and pg_ctl',
    );
  const host = '127.0.0.1';
  const data = path.join(dir, 'data');
  const log = path.join(dir, 'postgres.log');
  fs.mkdirSync(dir, { recursive: true });
  if (asRoot()) {
    // The postgres user must reach its folder: the test's temp folder (root's, 0700) becomes traversable
    // (not readable) by others.
    const parent = path.dirname(dir);
    fs.chmodSync(parent, fs.statSync(parent).mode | 0o711);
    await mustRun('chown', ['postgres:', dir]);
  }
  const initdb = asPostgres(path.join(bin, 'initdb'), [
    '-D',
    data,
    '-U',
    'postgres',
    '--auth=trust',
    '--encoding=UTF8',
    '--locale=C',
    '--no-sync',
  ]);
  await mustRun(initdb[0], initdb[1], { timeoutMs: 120_000 });

  const port = await freePort(host);
  const serverOptions = [
    `-p ${port}`,
    `-c listen_addresses=${host}`,
    `-c unix_socket_directories=${dir}`,
    '-c max_connections=300',
    // Fast, and still durable against what the tests do (kill PostgreSQL, never the machine): without
    // fsync the kernel keeps what was written. synchronous_commit stays on: off, a commit is answered
    // before its WAL leaves PostgreSQL's memory, and a killed server loses commits it had acknowledged
    // (the reliability suite's store crash found paysaga's events "lost" that way).
    '-c fsync=off',
    '-c full_page_writes=off',
  ].join(' ');
  const start = asPostgres(path.join(bin, 'pg_ctl'), [
    '-D',
    data,
    '-l',
    log,
    '-o',
    serverOptions,
    '-w',
    '-t',
    '60',
    'start',
  ]);
  const startServer = async (): Promise<number> => {
    const started = await runCommand(start[0], start[1], { timeoutMs: 90_000 });
    const pid = readPostmasterPid(data);
    if (started.code !== 0 || pid === undefined) {
      if (pid !== undefined) killQuietly(pid, 'SIGQUIT');
      throw new Error(
        `PostgreSQL did not start (pg_ctl exit ${started.code}):\n${started.stdout}${started.stderr}\n` +
          `--- ${log}\n${tail(log)}`,
      );
    }
    return pid;
  };
  let pid = await startServer();
  const ctlStop = async (mode: 'fast' | 'immediate') => {
    const stop = asPostgres(path.join(bin, 'pg_ctl'), ['-D', data, '-m', mode, '-w', '-t', '20', 'stop']);
    const res = await runCommand(stop[0], stop[1], { timeoutMs: 30_000 });
    if (res.code !== 0 && alive(pid)) {
      killQuietly(pid, 'SIGKILL');
      throw new Error(`pg_ctl stop failed (exit ${res.code}); postmaster ${pid} SIGKILLed`);
    }
  };
  const version = (await runCommand(path.join(bin, 'postgres'), ['--version'])).stdout.trim();

  let stopped = false;
  let running = true;
  return {
    host,
    port,
    user: 'postgres',
    version,
    log,
    get pid() {
      return pid;
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      if (running) await ctlStop('fast');
    },
    killNow() {
      if (!stopped && running) killQuietly(pid, 'SIGQUIT');
    },
    async down(mode = 'fast') {
      if (!running) return;
      running = false;
      await ctlStop(mode);
    },
    async up() {
      if (running || stopped) return;
      pid = await startServer();
      running = true;
    },
  };
}

/** A new database on the server (paysaga's store beside Temporal's); its URL. */
export async function createDatabase(postgres: Postgres, name: string): Promise<string> {
  const admin = new pg.Client({
    host: postgres.host,
    port: postgres.port,
    user: postgres.user,
    database: 'postgres',
  });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  return `postgres://${postgres.user}@${postgres.host}:${postgres.port}/${name}`;
}

function readPostmasterPid(data: string): number | undefined {
  try {
    const pid = Number(fs.readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function killQuietly(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

function tail(file: string, lines = 30): string {
  try {
    return fs.readFileSync(file, 'utf8').trim().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}
