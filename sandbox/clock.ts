/*
 * Time in the sandbox. Durations of the service are scaled by `timeScale` so tests can run a 24 h token
 * lifetime in a second; timestamps stay real wall-clock time.
 */

const startMicros = BigInt(Date.now()) * 1000n;
const startHr = process.hrtime.bigint();

/** Wall-clock now in microseconds: Date gives only milliseconds, the service shows a microsecond fraction. */
function nowMicros(): bigint {
  return startMicros + (process.hrtime.bigint() - startHr) / 1000n;
}

function format(micros: bigint, offsetMinutes: number): string {
  const shifted = micros + BigInt(offsetMinutes) * 60_000_000n;
  const seconds = new Date(Number(shifted / 1000n)).toISOString().slice(0, 19);
  const fraction = (shifted % 1_000_000n).toString().padStart(6, '0');
  if (offsetMinutes === 0) return `${seconds}.${fraction}Z`;
  const sign = offsetMinutes > 0 ? '+' : '-';
  const abs = Math.abs(offsetMinutes);
  return `${seconds}.${fraction}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

/** Session and operation timestamps: UTC, microsecond fraction, trailing Z. */
export function timestamp(atMs?: number): string {
  return format(atMs === undefined ? nowMicros() : BigInt(Math.round(atMs * 1000)), 0);
}

/** Token timestamps carry a numeric offset (the spec allows it; partners must parse both forms). */
export function tokenTimestamp(atMs: number): string {
  return format(BigInt(Math.round(atMs * 1000)), 180);
}

/** Real timers of one sandbox: every scheduled step and expiry goes through here so close() can stop them all. */
export class Timers {
  private readonly pending = new Set<NodeJS.Timeout>();
  private closed = false;

  constructor(
    readonly timeScale: number,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Milliseconds of service time as real milliseconds. */
  scaled(ms: number): number {
    return ms * this.timeScale;
  }

  /** Runs fn after `realMs` real milliseconds (at once when not positive); nothing once closed. */
  afterReal(realMs: number, fn: () => void): NodeJS.Timeout | undefined {
    if (this.closed) return undefined;
    const t = setTimeout(
      () => {
        this.pending.delete(t);
        try {
          fn();
        } catch (err) {
          this.onError(err);
        }
      },
      Math.max(0, Math.round(realMs)),
    );
    this.pending.add(t);
    return t;
  }

  cancel(t: NodeJS.Timeout | undefined): void {
    if (!t) return;
    clearTimeout(t);
    this.pending.delete(t);
  }

  close(): void {
    this.closed = true;
    for (const t of this.pending) clearTimeout(t);
    this.pending.clear();
  }
}
