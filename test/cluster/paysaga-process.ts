/**
 * A `paysaga <command>` (bin/paysaga.js) child process of the cluster test, configured only by its
 * environment and arguments, with its output kept (for waiting on a line, and for failure messages with
 * anything card-like blanked).
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Readable } from 'node:stream';
import { redactPans } from '../../provider/schemas/card';

const ROOT = path.resolve(__dirname, '../..');
export const PAYSAGA_BIN = path.join(ROOT, 'bin', 'paysaga.js');

/** Anything card-like masked as BIN + last 4 (session ids such as ps_1795... stay readable). */
export const withoutCardNumbers = redactPans;

export interface PaysagaProcess {
  name: string;
  child: ChildProcessByStdio<null, Readable, Readable>;
  pid: number;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  running(): boolean;
  /** The first match of `pattern` in the output; fails if the process exits first or after `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray>;
  /** SIGTERM (graceful), SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
  /** The last lines of the output, card-like digits blanked. */
  tail(lines?: number): string;
}

/**
 * `logFile`: the output is also written there line by line as it comes (card-like digits blanked), so a
 * run stopped from outside (a CI step's time bound) still leaves what each process said.
 */
export function spawnPaysaga(
  name: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  logFile?: string,
): PaysagaProcess {
  const child = spawn(process.execPath, [PAYSAGA_BIN, ...args], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (child.pid === undefined) throw new Error(`paysaga ${args.join(' ')} (${name}) did not start`);
  let out = '';
  let written = 0;
  const take = (c: Buffer) => {
    out += c.toString();
    if (!logFile) return;
    const end = out.lastIndexOf('\n') + 1; // whole lines only: a card number is never split between two writes
    if (end <= written) return;
    fs.appendFileSync(logFile, withoutCardNumbers(out.slice(written, end)));
    written = end;
  };
  child.stdout.on('data', take);
  child.stderr.on('data', take);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  if (logFile)
    void exited.then(() => {
      if (out.length > written) fs.appendFileSync(logFile, withoutCardNumbers(out.slice(written)));
      written = out.length;
    });
  const running = () => child.exitCode === null && child.signalCode === null;
  const tail = (lines = 30) => withoutCardNumbers(out.trim().split('\n').slice(-lines).join('\n'));
  return {
    name,
    child,
    pid: child.pid,
    output: () => out,
    exited,
    running,
    tail,
    async waitFor(pattern, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const m = pattern.exec(out);
        if (m) return m;
        if (!running() || Date.now() > deadline)
          throw new Error(
            `${name}: no ${pattern} in its output (${running() ? `not within ${timeoutMs} ms` : `exited ${child.exitCode ?? child.signalCode}`}):\n${tail()}`,
          );
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async stop(graceMs = 15_000) {
      if (!running()) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}
