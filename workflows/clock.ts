/**
 * The time a workflow decides by. A wait that ran out means its end has come: the clock never reads
 * earlier than the end of the last timed wait that ran out.
 *
 * Why not `Date.now()` alone: sdk-core applies the events a query task carries (a timer that fired, a
 * signal) in an activation of their own, with the time of the workflow's last task, and a replay applies
 * them with the next task, at that task's time (docs/decisions/018-looking-never-hurts.md; `npm run
 * bench -- query-split` shows it). A decision that compared `Date.now()` with the end of the wait that
 * just ran out would go one way live and the other on replay. Outside that case the two clocks agree:
 * a task that follows a timer starts after the timer's end.
 */
import * as wf from '@temporalio/workflow';

export class WorkflowClock {
  /** The end of the last timed wait that ran out (epoch ms). */
  private reached = 0;

  now(): number {
    return Math.max(Date.now(), this.reached);
  }

  /** Waits until `wake` holds, or up to `ms` when given; true if woken. */
  async wait(wake: () => boolean, ms?: number): Promise<boolean> {
    if (ms === undefined) {
      await wf.condition(wake);
      return true;
    }
    const end = this.now() + ms;
    const woken = await wf.condition(wake, ms);
    if (!woken) this.reached = Math.max(this.reached, end);
    return woken;
  }
}
