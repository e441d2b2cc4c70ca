/**
 * How often a payer's return may make a session workflow check the provider's state
 * (docs/decisions/014-two-listeners.md). The public return page throttles per session in each API process; this bounds what several API
 * replicas (or anyone who can signal) together can cause: at most one state check per interval, however
 * many payerReturned signals arrive. Workflow-safe: the clock is the workflow's (wf time in the caller).
 */
export const PAYER_RETURN_CHECK_INTERVAL_MS = 5_000;

export class PayerReturnThrottle {
  private lastAdmittedAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly intervalMs = PAYER_RETURN_CHECK_INTERVAL_MS) {}

  /** True when a return at `now` may request a state check (and records it). */
  admit(now: number): boolean {
    if (now - this.lastAdmittedAt < this.intervalMs) return false;
    this.lastAdmittedAt = now;
    return true;
  }
}
