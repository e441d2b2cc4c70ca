/** Runs a command to its end, bounded in time, with its output kept for error messages. */
import { execFile } from 'node:child_process';

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  timeoutMs?: number;
}

export class CommandError extends Error {
  override name = 'CommandError';
  constructor(
    readonly command: string,
    readonly result: RunResult,
  ) {
    super(
      `${command} failed (exit ${result.code ?? 'none: killed or timed out'}):\n` +
        `${`${result.stdout}\n${result.stderr}`.trim().split('\n').slice(-20).join('\n')}`,
    );
  }
}

/** Resolves with the outcome whatever the exit code; SIGKILLs the command after `timeoutMs`. */
export function runCommand(cmd: string, args: readonly string[], o: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(
      cmd,
      args,
      {
        env: o.env ?? process.env,
        cwd: o.cwd,
        timeout: o.timeoutMs ?? 60_000,
        killSignal: 'SIGKILL',
        maxBuffer: 16 * 1024 * 1024,
        encoding: 'utf8',
      },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : null) : 0;
        resolve({ code, stdout, stderr: stderr || (err && code === null ? err.message : '') });
      },
    );
  });
}

/** As runCommand, but a non-zero exit is a CommandError. */
export async function mustRun(cmd: string, args: readonly string[], o: RunOptions = {}): Promise<RunResult> {
  const result = await runCommand(cmd, args, o);
  if (result.code !== 0) throw new CommandError(`${cmd.split('/').pop()} ${args.join(' ')}`, result);
  return result;
}
