/**
 * `npm start` under a process manager: SIGTERM sent to the npm process (not to its group, as a
 * supervisor or an IDE's stop button does) stops the whole stack. The script execs node, so npm's own
 * signal forwarding reaches `paysaga dev` directly instead of a `sh` that would die and leave node
 * running. Checked: npm exits, every process that ran under it (dev, the Temporal server) is gone, and
 * the API, sandbox, Temporal and UI ports are free again.
 *
 * The stack gets its own data folder and free ports (0) through the PAYSAGA_* variables `npm start`
 * passes on to `paysaga dev`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type { DevState } from '../../cli/dev/data-dir';

const ROOT = path.resolve(__dirname, '../..');

let dataDir: string;
let npm: ChildProcess | undefined;
let out = '';
const seen = new Set<number>();

beforeAll(() => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'paysaga-npm-start-'));
});

afterAll(() => {
  // Whatever a failed test left: the npm process group, then anything that ran under it.
  if (npm?.pid && npm.exitCode === null && npm.signalCode === null) kill(-npm.pid);
  for (const pid of seen) if (alive(pid)) kill(pid);
  fs.rmSync(dataDir, { recursive: true, force: true });
});

function kill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone
  }
}

/** Running and not a zombie. */
function alive(pid: number): boolean {
  try {
    return !/^State:\s+Z/m.test(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}

function parentOf(pid: number): number | undefined {
  try {
    // The command name (2nd field) may hold spaces and parentheses: read after the last ')'.
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/** Every process below `root` (Linux /proc). */
function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const ppid = parentOf(Number(entry));
    if (ppid === undefined) continue;
    children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
  }
  const found: number[] = [];
  const walk = (pid: number) => {
    for (const child of children.get(pid) ?? []) {
      found.push(child);
      walk(child);
    }
  };
  walk(root);
  return found;
}

/** Processes whose command line names the data folder (the Temporal server's --db-filename). */
function usingDataDir(): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(dataDir) && alive(Number(entry)))
        pids.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}

function portInUse(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.setTimeout(2_000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(false));
  });
}

async function until(what: string, ms: number, ok: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > deadline)
      throw new Error(`${what} within ${ms} ms\n--- output (tail)\n${out.slice(-4000)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const portOf = (url: string) => Number(new URL(url.includes('://') ? url : `grpc://${url}`).port);

test('SIGTERM to the npm process stops the stack and frees its ports', async () => {
  npm = spawn('npm', ['start'], {
    cwd: ROOT,
    env: {
      ...process.env,
      PAYSAGA_DATA_DIR: dataDir,
      PAYSAGA_PUBLIC_PORT: '0',
      PAYSAGA_INTERNAL_PORT: '0',
      PAYSAGA_SANDBOX_PORT: '0',
      PAYSAGA_TEMPORAL_PORT: '0',
      PAYSAGA_TEMPORAL_UI_PORT: '0',
      PAYSAGA_LOG_LEVEL: 'warn',
    },
    // Its own process group, only so that afterAll can clean up after a failure.
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  npm.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  npm.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    npm!.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const npmPid = npm.pid!;

  // `npm run setup` first, maybe a cold build of dist/, then the stack.
  await until('npm start did not come up', 170_000, () => {
    if (npm!.exitCode !== null) throw new Error(`npm start exited ${npm!.exitCode}\n${out}`);
    return out.includes('Ctrl-C stops everything');
  });
  const state = JSON.parse(fs.readFileSync(path.join(dataDir, 'dev.json'), 'utf8')) as DevState;
  const below = descendants(npmPid);
  for (const pid of below) seen.add(pid);
  // node runs directly under npm (the script execs it), and the Temporal server under node.
  expect(parentOf(state.pid)).toBe(npmPid);
  expect(below).toEqual(expect.arrayContaining([state.pid, state.temporalPid]));
  const ports = [
    state.publicUrl,
    state.internalUrl,
    state.sandboxUrl,
    state.temporalAddress,
    state.temporalUiUrl,
  ].map(portOf);
  for (const port of ports) expect(await portInUse(port)).toBe(true);

  process.kill(npmPid, 'SIGTERM');
  const timeout = new Promise<never>((_, reject) =>
    setTimeout(
      () => reject(new Error(`npm did not exit within 60 s of SIGTERM\n${out.slice(-4000)}`)),
      60_000,
    ).unref(),
  );
  const { code } = await Promise.race([exited, timeout]);
  expect(out).toContain('paysaga dev stopped');
  expect(code).toBe(0);

  await until('processes were left running', 10_000, () => below.every((pid) => !alive(pid)));
  expect(usingDataDir()).toEqual([]);
  for (const port of ports) expect(await portInUse(port)).toBe(false);
  expect(fs.existsSync(path.join(dataDir, 'dev.json'))).toBe(false);
}, 240_000);
