/**
 * One `paysaga <command>` run as a real process (bin/paysaga.js), to its exit: its code and output.
 * Killed after `timeoutMs` (60 s) so a hung command fails the test instead of holding it.
 *
 *   const r = await runPaysaga(['setup', '--json'], { TEMPORAL_ADDRESS: ... });
 */
import { spawn } from 'node:child_process';
import * as path from 'node:path';

const BIN = path.resolve(__dirname, '../../bin/paysaga.js');

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `env` is the whole environment besides PATH (and PAYSAGA_REBUILD=0: dist/ is built by the setup). */
export function runPaysaga(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 60_000): Promise<CliRun> {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { PAYSAGA_REBUILD: '0', ...env, PATH: process.env.PATH },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}
