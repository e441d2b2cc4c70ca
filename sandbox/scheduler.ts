import type { Timers } from './clock';
import type { SandboxStore } from './store';

/*
 * The sandbox's own timed transitions (the next step of a flow, QR and 3-D Secure expiry, a refund
 * completing): each one a job, a plain JSON description of what to do, with its due time in real
 * epoch ms. A job is stored with the change that scheduled it and removed with the change it makes,
 * in the same commit, so after a restart every pending job runs exactly once: at its due time, or at
 * once if it came due while the sandbox was down.
 */

export interface ScheduledJob<J> {
  id: string;
  dueAtMs: number;
  job: J;
}

export class Scheduler<J> {
  private seq = 0;
  private readonly armed = new Map<string, NodeJS.Timeout>();
  private runner: ((job: J) => void) | undefined;

  constructor(
    private readonly timers: Timers,
    private readonly store: SandboxStore,
    private readonly onCommitError: (err: unknown) => void,
  ) {}

  /** What runs a due job (set once the engine exists). */
  setRunner(run: (job: J) => void): void {
    this.runner = run;
  }

  /** Schedules `job` after `serviceMs` of service time (scaled by timeScale); returns its id. */
  after(serviceMs: number, job: J): string {
    const row: ScheduledJob<J> = {
      id: `job_${++this.seq}`,
      dueAtMs: Date.now() + Math.round(this.timers.scaled(serviceMs)),
      job,
    };
    this.store.put('jobs', row.id, row);
    this.arm(row);
    return row.id;
  }

  cancel(id: string | undefined): void {
    if (id === undefined) return;
    this.timers.cancel(this.armed.get(id));
    this.armed.delete(id);
    this.store.remove('jobs', id);
  }

  /** Jobs of an earlier run, in due order (ties: in the order they were scheduled). */
  restore(rows: Iterable<ScheduledJob<J>>): void {
    const sorted = [...rows].sort((a, b) => a.dueAtMs - b.dueAtMs || seqOf(a.id) - seqOf(b.id));
    for (const row of sorted) {
      this.seq = Math.max(this.seq, seqOf(row.id));
      this.arm(row);
    }
  }

  private arm(row: ScheduledJob<J>): void {
    // Once the timers are closed (shutting down) the job stays stored for the next start.
    const t = this.timers.afterReal(row.dueAtMs - Date.now(), () => this.fire(row));
    if (t) this.armed.set(row.id, t);
  }

  private fire(row: ScheduledJob<J>): void {
    this.armed.delete(row.id);
    this.store.remove('jobs', row.id);
    try {
      this.runner?.(row.job);
    } finally {
      try {
        this.store.commit();
      } catch (err) {
        this.onCommitError(err);
      }
    }
  }
}

function seqOf(id: string): number {
  const n = Number(id.slice(id.indexOf('_') + 1));
  return Number.isFinite(n) ? n : 0;
}
