/**
 * A Temporal server as production runs it, for the cluster test: `temporal-server` built from source by
 * scripts/build-temporal-server.js, on PostgreSQL (postgres12 plugin; the persistence and the visibility
 * schemas set up by `temporal-sql-tool` from the schemas embedded in it), all four services (frontend,
 * history, matching, worker) in one process with 4 history shards, every port a free one on 127.0.0.1.
 * The config file is written into the given folder; the server's log goes to `temporal.log` there.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { freePort } from '../../cli/dev/ports';
import { findProjectRoot } from '../../cli/temporal-cli';
import type { Postgres } from './postgres';
import { mustRun } from './run';

/** Where scripts/build-temporal-server.js installs the binaries (`npm run test:cluster` builds them). */
export function temporalServerBinaries(root = findProjectRoot()): { server: string; sqlTool: string } {
  const bin = path.join(root, '.tools', 'temporal-server', 'bin');
  for (const name of ['temporal-server', 'temporal-sql-tool'])
    if (!fs.existsSync(path.join(bin, name)))
      throw new Error(
        `${path.join(bin, name)} is missing: run \`npm run test:cluster\` (it builds it) or ` +
          '`node scripts/build-temporal-server.js`',
      );
  return { server: path.join(bin, 'temporal-server'), sqlTool: path.join(bin, 'temporal-sql-tool') };
}

export const HISTORY_SHARDS = 4;
const DATABASES = { temporal: 'temporal', visibility: 'temporal_visibility' } as const;

/** Creates both databases and sets up their schemas at the version the tool embeds. */
export async function setupSchemas(sqlTool: string, pg: Postgres): Promise<void> {
  const connection = [
    '--plugin',
    'postgres12',
    '--endpoint',
    pg.host,
    '--port',
    String(pg.port),
    '--user',
    pg.user,
    '--password',
    'trust',
  ];
  for (const [schema, db] of Object.entries(DATABASES)) {
    const tool = (...args: string[]) =>
      mustRun(sqlTool, [...connection, '--database', db, ...args], { timeoutMs: 120_000 });
    await tool('create-database');
    await tool('setup-schema', '--version', '0.0');
    await tool('update-schema', '--schema-name', `postgresql/v12/${schema}`);
  }
}

export interface TemporalServer {
  /** host:port of the frontend's gRPC. */
  address: string;
  pid: number;
  log: string;
  child: ChildProcess;
  /** SIGTERM, SIGKILL after 15 s. */
  stop(): Promise<void>;
  killNow(): void;
  /** The last lines of the server's log (for failure messages). */
  logTail(lines?: number): string;
}

/**
 * `env`: the server's environment. It must not carry the server's own TEMPORAL_* settings (e.g.
 * TEMPORAL_ENVIRONMENT, which it refuses next to --config-file).
 */
export async function startTemporalServer(
  binary: string,
  pg: Postgres,
  dir: string,
  env: NodeJS.ProcessEnv,
): Promise<TemporalServer> {
  const host = '127.0.0.1';
  const ports: number[] = [];
  const port = async () => {
    const p = await freePort(host, ports);
    ports.push(p);
    return p;
  };
  const rpc = async (http = false) => ({
    grpcPort: await port(),
    membershipPort: await port(),
    bindOnLocalHost: true,
    ...(http ? { httpPort: await port() } : {}),
  });
  const services = {
    frontend: { rpc: await rpc(true) },
    history: { rpc: await rpc() },
    matching: { rpc: await rpc() },
    worker: { rpc: await rpc() },
  };
  const address = `${host}:${services.frontend.rpc.grpcPort}`;
  const sql = (databaseName: string, maxConns: number) => ({
    sql: {
      pluginName: 'postgres12',
      databaseName,
      connectAddr: `${pg.host}:${pg.port}`,
      connectProtocol: 'tcp',
      user: pg.user,
      password: 'trust',
      maxConns,
      maxIdleConns: maxConns,
      maxConnLifetime: '1h',
    },
  });
  const dynamicConfigFile = path.join(dir, 'dynamicconfig.yaml');
  // JSON is YAML: the server reads both files as YAML.
  fs.writeFileSync(
    dynamicConfigFile,
    JSON.stringify(
      {
        // Search attributes registered by the test are used at once (without it, after up to a minute);
        // the dev server sets the same.
        'system.forceSearchAttributesCacheRefreshOnRead': [{ value: true, constraints: {} }],
        // As deploy/temporal-dynamicconfig.yaml and every dev server of paysaga's.
        'system.enableActivityEagerExecution': [{ value: true, constraints: {} }],
      },
      null,
      2,
    ),
  );
  const config = {
    log: { stdout: true, level: 'warn' },
    persistence: {
      defaultStore: 'postgres-default',
      visibilityStore: 'postgres-visibility',
      numHistoryShards: HISTORY_SHARDS,
      datastores: {
        'postgres-default': sql(DATABASES.temporal, 20),
        'postgres-visibility': sql(DATABASES.visibility, 10),
      },
    },
    global: { membership: { maxJoinDuration: '30s', broadcastAddress: host } },
    services,
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: 'active',
      currentClusterName: 'active',
      clusterInformation: {
        active: { enabled: true, initialFailoverVersion: 1, rpcName: 'frontend', rpcAddress: address },
      },
    },
    dcRedirectionPolicy: { policy: 'noop' },
    dynamicConfigClient: { filepath: dynamicConfigFile, pollInterval: '10s' },
  };
  const configFile = path.join(dir, 'temporal-server.yaml');
  fs.writeFileSync(configFile, JSON.stringify(config, null, 2));

  const log = path.join(dir, 'temporal.log');
  const fd = fs.openSync(log, 'a');
  let child: ChildProcess;
  try {
    child = spawn(binary, ['--config-file', configFile, '--allow-no-auth', 'start'], {
      env,
      stdio: ['ignore', fd, fd],
    });
  } finally {
    fs.closeSync(fd);
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const running = () => child.exitCode === null && child.signalCode === null;
  if (child.pid === undefined) throw new Error(`${binary} did not start`);
  const pid = child.pid;
  const logTail = (lines = 15) => {
    try {
      return fs.readFileSync(log, 'utf8').trim().split('\n').slice(-lines).map(shortLogLine).join('\n');
    } catch {
      return '(no log)';
    }
  };
  return {
    address,
    pid,
    log,
    child,
    logTail,
    async stop() {
      if (!running()) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
    killNow() {
      if (running()) child.kill('SIGKILL');
    },
  };
}

/** `temporal-server --version` / `temporal-sql-tool --version`, for the test's report. */
export async function binaryVersion(binary: string): Promise<string> {
  return (await mustRun(binary, ['--version'])).stdout.trim();
}

/** A JSON log line of the server as `level msg: error` (its stack traces left out). */
function shortLogLine(line: string): string {
  try {
    const e = JSON.parse(line) as { level?: string; msg?: string; error?: string };
    return `${e.level ?? '?'} ${e.msg ?? ''}${e.error ? `: ${e.error}` : ''}`;
  } catch {
    return line.slice(0, 500);
  }
}
