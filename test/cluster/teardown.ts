/**
 * What the cluster test started, stopped in the opposite order however the test ends. Each step is
 * bounded in time and a failing step does not stop the others. Should the test process exit without
 * running the teardown (an uncaught error, jest giving up), an `exit` hook still kills every child
 * process that was registered with its pid, synchronously.
 */
export interface TeardownStep {
  name: string;
  stop: () => Promise<void> | void;
}

const STEP_TIMEOUT_MS = 30_000;

export class Teardown {
  private readonly steps: TeardownStep[] = [];
  private readonly pids = new Map<number, () => void>();
  private readonly onExit = () => {
    for (const kill of this.pids.values()) kill();
  };

  constructor() {
    process.once('exit', this.onExit);
  }

  /** Runs `stop` at teardown (last added, first run). */
  add(name: string, stop: () => Promise<void> | void): void {
    this.steps.push({ name, stop });
  }

  /** `kill()` runs at process exit if the teardown has not (it must be synchronous). */
  onProcessExit(pid: number, kill: () => void): void {
    this.pids.set(pid, kill);
  }

  forget(pid: number): void {
    this.pids.delete(pid);
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
    this.onExit(); // whatever a failed step left running
    this.pids.clear();
    process.removeListener('exit', this.onExit);
    return problems;
  }
}
