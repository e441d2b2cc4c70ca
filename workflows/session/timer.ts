/**
 * Every wait of a session that has a timeout, on one Temporal timer (patch `shared-timer`).
 *
 * A session waits with a timeout in several places at once: the hold of a change on the way (2 s), the
 * start's deadline and the approval's "news is late" look (each `lateAfterMs`), the starter's report
 * and a reader's long poll. Each `wf.condition(fn, ms)` starts a timer of its own, and nearly every one
 * is canceled within a second by the news it waited for: a frictionless card checkout started three
 * timers and canceled two, each a command, one or two history events and a task in the server's timer
 * queue. Here the waits share one timer, set for the earliest deadline among them: a later deadline
 * needs no timer until the earlier ones are gone, and the timer is canceled when nobody waits.
 *
 *   const timer = new SharedTimer();          // in the workflow function (its scope is the timer's)
 *   await timer.condition(() => news, 2_000); // as wf.condition: true once news, false at the deadline
 *
 * Runs from before the patch wait with `wf.condition` as they ran (`ownTimers`).
 */
import * as wf from '@temporalio/workflow';

/** Marks runs whose waits share one timer (and stands for `held-record`, session-recorder.ts). */
export const SHARED_TIMER_PATCH = 'shared-timer';

/** How a session waits for something with a timeout. */
export interface Waits {
  /** As `wf.condition(fn, ms)`: true once `fn` holds, false when `ms` passed first. */
  condition(fn: () => boolean, ms: number): Promise<boolean>;
}

/** A timer per wait, as runs from before `shared-timer` waited. */
export const ownTimers: Waits = { condition: (fn, ms) => wf.condition(fn, ms) };

interface Waiter {
  /** The deadline, in workflow time. */
  readonly at: number;
  expired: boolean;
}

export class SharedTimer implements Waits {
  private readonly waiters = new Set<Waiter>();
  private armed?: { at: number; scope: wf.CancellationScope };
  /**
   * The timer lives in the workflow's own scope, not in the scope of whoever happens to arm it (an Update
   * handler's ends with its handler while others still wait on the timer).
   */
  private readonly scope = wf.CancellationScope.current();

  async condition(fn: () => boolean, ms: number): Promise<boolean> {
    if (fn()) return true;
    // No deadline to share (not a finite number): exactly what wf.condition makes of it.
    if (!Number.isFinite(ms)) return wf.condition(fn, ms);
    // As wf.sleep: a timer lasts at least 1 ms.
    const waiter: Waiter = { at: Date.now() + Math.max(1, ms), expired: false };
    this.waiters.add(waiter);
    this.arm();
    try {
      await wf.condition(() => waiter.expired || fn());
      return !waiter.expired;
    } finally {
      this.waiters.delete(waiter);
      this.arm();
    }
  }

  /** One timer, for the earliest deadline; none when nobody waits. */
  private arm(): void {
    let earliest = Infinity;
    for (const w of this.waiters) if (!w.expired && w.at < earliest) earliest = w.at;
    if (this.armed?.at === earliest) return;
    this.armed?.scope.cancel();
    this.armed = undefined;
    if (earliest === Infinity) return;
    const armed = {
      at: earliest,
      scope: new wf.CancellationScope({ cancellable: true, parent: this.scope }),
    };
    this.armed = armed;
    armed.scope
      .run(() => wf.sleep(Math.max(1, earliest - Date.now())))
      .then(
        () => {
          if (this.armed === armed) this.armed = undefined;
          for (const w of this.waiters) if (w.at <= armed.at) w.expired = true;
          this.arm();
        },
        // Canceled: by arm() (another deadline is the earliest now), or with the workflow.
        () => undefined,
      );
  }
}
