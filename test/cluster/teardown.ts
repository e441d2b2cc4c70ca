/**
 * What the cluster test started, stopped in the opposite order however the test ends. Each step is
 * bounded in time and a failing step does not stop the others; what a failed step left running is
 * killed at the end.
 *
 * Should the test process die without running the teardown (SIGKILL, a CI timeout, jest giving up), a
 * detached reaper process (reaper.js) kills every guarded process and removes the guarded folders. Jest's
 * test environment cannot hook the real process's exit or signals, hence a process of its own.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export interface TeardownStep {
  name: string;
  stop: () => Promise<void> | void;
}

interface Guarded {
  pid: number;
  /** Part of the process's command line: a reused pid is not killed. */
  cmd: string;
  signal: NodeJS.Signals;
  kill: () => void;
}

const STEP_TIMEOUT_MS = 30_000;

export class Teardown {
  private readonly steps: TeardownStep[] = [];
  private readonly guarded: Guarded[] = [];
  private readonly folders: string[] = [];
  private readonly stateFile = path.join(
    os.tmpdir(),
    `paysaga-cluster-reaper-${process.pid}-${randomBytes(3).toString('hex')}.json`,
  );

  constructor() {
    this.writeState();
    const reaper = spawn(
      process.execPath,
      [path.join(__dirname, 'reaper.js'), String(process.pid), this.stateFile],
      { detached: true, stdio: 'ignore' },
    );
    reaper.unref();
  }

  /** Runs `stop` at teardown (last added, first run). */
  add(name: string, stop: () => Promise<void> | void): void {
    this.steps.push({ name, stop });
  }

  /** A process to kill should the test process die first (`kill` is the in-process last resort). */
  guard(pid: number, cmd: string, signal: NodeJS.Signals, kill: () => void): void {
    this.guarded.push({ pid, cmd, signal, kill });
    this.writeState();
  }

  /** A folder to remove (after the guarded processes) should the test process die first. */
  guardFolder(dir: string): void {
    this.folders.push(dir);
    this.writeState();
  }

  /** Runs every step, newest first; resolves with the problems (none: empty). */
  async run(): Promise<string[]> {
    const problems: string[] = [];
    for (const step of this.steps.splice(0).reverse()) {
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          Promise.resolve().then(step.stop),
          new Promise((_, reject) => {
            timer = setTimeout(() => reject(new Error(`not within ${STEP_TIMEOUT_MS} ms`)), STEP_TIMEOUT_MS);
          }),
        ]);
      } catch (err) {
        problems.push(`${step.name}: ${err instanceof Error ? err.message : String(err)}`);
      } finally {
        clearTimeout(timer);
      }
    }
    for (const g of this.guarded.splice(0)) g.kill(); // whatever a failed step left running
    fs.rmSync(this.stateFile, { force: true }); // the reaper sees it gone and exits
    return problems;
  }

  private writeState(): void {
    const state = {
      kill: this.guarded.map(({ pid, cmd, signal }) => ({ pid, cmd, signal })),
      remove: this.folders,
    };
    fs.writeFileSync(`${this.stateFile}.tmp`, JSON.stringify(state));
    fs.renameSync(`${this.stateFile}.tmp`, this.stateFile);
  }
}
