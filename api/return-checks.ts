/**
 * What keeps the public return page from flooding a workflow (docs/decisions/014-two-listeners.md), per API
 * process: a session's state is checked (payerReturned signal, then reads) at most once per interval however
 * often its page is hit; requests in between get that check's result, or share one read of the session while
 * it was not final. Memory is bounded: a session's entry goes once its interval has passed, and beyond
 * `maxSessions` the oldest go first. The workflow throttles the signals of all replicas together
 * (workflows/payer-return.ts).
 */
export const DEFAULT_RETURN_CHECK_INTERVAL_MS = 5_000;
const DEFAULT_MAX_SESSIONS = 10_000;

export class ReturnChecks<V> {
  /** session id -> its latest check; Map order is the order in which the checks started. */
  private readonly checks = new Map<string, { at: number; result: Promise<V> }>();
  private readonly reading = new Map<string, Promise<V>>();

  constructor(
    private readonly intervalMs = DEFAULT_RETURN_CHECK_INTERVAL_MS,
    private readonly maxSessions = DEFAULT_MAX_SESSIONS,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The check of `sessionId` that started within the interval (running or done; `fresh: false`), else a
   * new `check()` (`fresh: true`). `check` should not reject: its result is shared.
   */
  latest(sessionId: string, check: () => Promise<V>): { result: Promise<V>; fresh: boolean } {
    const now = this.now();
    this.forgetBefore(now - this.intervalMs);
    const recent = this.checks.get(sessionId);
    if (recent) return { result: recent.result, fresh: false };
    const result = check();
    this.checks.set(sessionId, { at: now, result });
    for (const oldest of this.checks.keys()) {
      if (this.checks.size <= this.maxSessions) break;
      this.checks.delete(oldest);
    }
    return { result, fresh: true };
  }

  /**
   * `read()` of `sessionId`, shared by every caller while it runs; its result replaces the interval's
   * (the interval itself does not restart). `read` should not reject.
   */
  reread(sessionId: string, read: () => Promise<V>): Promise<V> {
    const running = this.reading.get(sessionId);
    if (running) return running;
    const result = read().finally(() => this.reading.delete(sessionId));
    this.reading.set(sessionId, result);
    const entry = this.checks.get(sessionId);
    if (entry) entry.result = result;
    return result;
  }

  /** Sessions currently remembered. */
  get size(): number {
    return this.checks.size;
  }

  private forgetBefore(time: number): void {
    for (const [id, { at }] of this.checks) {
      if (at > time) break;
      this.checks.delete(id);
    }
  }
}
