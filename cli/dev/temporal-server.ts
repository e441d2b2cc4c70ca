/**
 * The Temporal dev server of `paysaga dev`: `temporal server start-dev` from the CLI binary chosen by
 * cli/temporal-cli.ts, with a persistent SQLite file, the UI on its own port and paysaga's search
 * attributes, run as a child process in its own process group (so a terminal's Ctrl-C reaches only
 * `paysaga dev`, which stops the server last, after the worker and the API).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { Connection } from '@temporalio/client';
import { searchAttributeCliArgs } from '../../common/search-attributes';

export interface TemporalDevServerOptions {
  cliPath: string;
  /** SQLite file for the server's state (kept across runs). */
  dbFile: string;
  host: string;
  port: number;
  uiPort: number;
  namespace: string;
  /** The UI's remote codec endpoint (the API's `/codec`), so the UI shows decrypted payloads. */
  codecEndpoint?: string;
  /** Temporal server log level (debug, info, warn, error). */
  logLevel?: string;
  /** How long to wait for the server to answer. */
  readyTimeoutMs?: number;
  /** Called with each line the server prints. */
  onLine?: (line: string) => void;
  /** Aborts the wait for readiness (the server is then stopped). */
  signal?: AbortSignal;
}

export interface TemporalDevServer {
  address: string;
  uiUrl: string;
  pid: number;
  child: ChildProcess;
  /** Resolves with the exit code (or signal name) once the process has exited. */
  exited: Promise<number | string | null>;
  /** SIGTERM to its process group, SIGKILL after `graceMs`; resolves once it has exited. */
  stop(graceMs?: number): Promise<void>;
  /** Last lines the server printed (for error messages). */
  tail(): string[];
}

/**
 * Dynamic config every dev server of paysaga's runs with (`paysaga dev`, the tests, the benchmarks):
 * eager activity dispatch, off by default on a server, so that an activity a workflow task schedules
 * (a session's approval, a decision's call) comes back in the task's reply to the worker that asked
 * instead of through the task queue: one matching round trip fewer per activity. docs/operations.md
 * says how to turn it on for a cluster.
 */
export const DEV_SERVER_DYNAMIC_CONFIG = [
  '--dynamic-config-value',
  'system.enableActivityEagerExecution=true',
];

export function temporalDevServerArgs(o: TemporalDevServerOptions): string[] {
  return [
    'server',
    'start-dev',
    '--db-filename',
    o.dbFile,
    // WAL with synchronous=NORMAL: a commit survives a crash of the server or of paysaga dev (what a dev
    // stack meets), not of the machine; without it every write waits for an fsync, and the server
    // spends the checkouts' time on the disk.
    '--sqlite-pragma',
    'journal_mode=wal',
    '--sqlite-pragma',
    'synchronous=normal',
    '--ip',
    o.host,
    '--port',
    String(o.port),
    '--ui-port',
    String(o.uiPort),
    '--namespace',
    o.namespace,
    ...searchAttributeCliArgs(),
    ...DEV_SERVER_DYNAMIC_CONFIG,
    ...(o.codecEndpoint ? ['--ui-codec-endpoint', o.codecEndpoint] : []),
    '--ui-disable-news-fetch',
    '--log-level',
    o.logLevel ?? 'warn',
  ];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Starts the server and resolves once it answers for the namespace; rejects (server stopped) otherwise. */
export async function startTemporalDevServer(o: TemporalDevServerOptions): Promise<TemporalDevServer> {
  const child = spawn(o.cliPath, temporalDevServerArgs(o), {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const lines: string[] = [];
  // Once asked to stop, the server's complaints about closing connections are noise.
  let stopping = false;
  const take = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split(/\r?\n/)) {
      if (!line.trim()) continue;
      lines.push(line);
      if (lines.length > 40) lines.shift();
      if (!stopping) o.onLine?.(line);
    }
  };
  child.stdout?.on('data', take);
  child.stderr?.on('data', take);
  let exitedWith: number | string | null | undefined;
  const exited = new Promise<number | string | null>((resolve) => {
    child.once('exit', (code, signal) => {
      exitedWith = code ?? signal;
      resolve(exitedWith);
    });
    child.once('error', (err) => {
      lines.push(`cannot run ${o.cliPath}: ${err.message}`);
      exitedWith = -1;
      resolve(-1);
    });
  });
  // A crash of this process must not leave the server behind (exit handlers run synchronously).
  const killOnExit = () => {
    if (exitedWith === undefined && child.pid) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  };
  process.once('exit', killOnExit);

  const stop = async (graceMs = 10_000) => {
    stopping = true;
    if (exitedWith === undefined && child.pid) {
      const signalGroup = (sig: NodeJS.Signals) => {
        try {
          process.kill(-child.pid!, sig);
        } catch {
          // already gone
        }
      };
      signalGroup('SIGTERM');
      const timer = setTimeout(() => signalGroup('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    }
    await exited;
    process.removeListener('exit', killOnExit);
  };

  const address = `${o.host}:${o.port}`;
  const server: TemporalDevServer = {
    address,
    uiUrl: `http://${o.host}:${o.uiPort}`,
    pid: child.pid ?? -1,
    child,
    exited,
    stop,
    tail: () => [...lines],
  };

  const deadline = Date.now() + (o.readyTimeoutMs ?? 60_000);
  let lastError = '';
  for (;;) {
    if (exitedWith !== undefined) {
      await stop();
      throw new Error(
        `the Temporal dev server exited (${exitedWith}) before it answered; its last lines:\n  ` +
          (lines.slice(-10).join('\n  ') || '(nothing)'),
      );
    }
    if (o.signal?.aborted) {
      await stop();
      throw new Error('interrupted while the Temporal dev server was starting');
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`the Temporal dev server did not answer on ${address} in time (${lastError})`);
    }
    let connection: Connection | undefined;
    try {
      connection = await Connection.connect({ address, connectTimeout: 1_000 });
      const c = connection;
      await c.withDeadline(Date.now() + 3_000, () =>
        c.workflowService.describeNamespace({ namespace: o.namespace }),
      );
      await connection.close();
      return server;
    } catch (err) {
      lastError = err instanceof Error ? err.message : String(err);
      await connection?.close().catch(() => undefined);
      await sleep(250);
    }
  }
}
