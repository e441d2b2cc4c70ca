/**
 * `paysaga dev` as a real child process (bin/paysaga.js) for end-to-end tests: started on a data
 * folder with the given port flags, read from its banner once it is up, stopped by a signal.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
const BIN = path.join(ROOT, 'bin', 'paysaga.js');

/** Every port of `paysaga dev` chosen free (0). */
export const FREE_PORTS = [
  '--public-port',
  '0',
  '--internal-port',
  '0',
  '--sandbox-port',
  '0',
  '--temporal-port',
  '0',
  '--temporal-ui-port',
  '0',
];

export interface DevProcess {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** From the banner. */
  apiUrl: string;
  sandboxUrl: string;
  token: string;
  temporalPid: number;
}

/** Starts `paysaga dev --data <dataDir> <args>` and resolves once its banner is printed. */
export async function startDevProcess(
  dataDir: string,
  args: string[],
  opts: { timeoutMs?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<DevProcess> {
  const child = spawn(process.execPath, [BIN, 'dev', '--data', dataDir, ...args], {
    cwd: ROOT,
    env: { ...process.env, PAYSAGA_LOG_LEVEL: 'warn', ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  // The first start after a source change rebuilds dist/ (tsc) before anything else.
  const deadline = Date.now() + (opts.timeoutMs ?? 170_000);
  while (!out.includes('Ctrl-C stops everything')) {
    if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      throw new Error(
        `paysaga dev did not come up (exit ${child.exitCode ?? child.signalCode ?? 'none: timed out'})\n` +
          `--- stdout\n${out}\n--- stderr (tail)\n${err.slice(-4000)}`,
      );
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  const line = (name: string) => {
    const m = new RegExp(`^ {2}${name}\\s+(\\S+)`, 'm').exec(out);
    if (!m) throw new Error(`no "${name}" line in the banner:\n${out}`);
    return m[1]!;
  };
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    apiUrl: line('API'),
    sandboxUrl: line('Sandbox'),
    token: line('API token'),
    temporalPid: Number(/^ {2}Temporal\s+\S+\s+namespace \S+\s+pid (\d+)/m.exec(out)?.[1]),
  };
}

/** Sends `signal` and waits for the exit (at most `timeoutMs`). */
export async function stopDevProcess(
  dev: DevProcess,
  signal: NodeJS.Signals,
  timeoutMs = 45_000,
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  dev.child.kill(signal);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new Error(
            `paysaga dev did not exit within ${timeoutMs} ms of ${signal}\n${dev.stderr().slice(-3000)}`,
          ),
        ),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([dev.exited, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** After a test: whatever is still running, the dev process and its Temporal server (own group). */
export function killDevProcess(dev: DevProcess | undefined): void {
  if (!dev) return;
  if (dev.child.exitCode === null && dev.child.signalCode === null) dev.child.kill('SIGKILL');
  if (dev.temporalPid > 0) {
    try {
      process.kill(-dev.temporalPid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}
