/**
 * One local activity at a time per workflow. The SDK's core matches recorded local-activity markers to
 * the commands a replay produces in order; two running at once (the recorder's write and a webhook's
 * verification) may complete in either order, and a replay that meets them the other way round fails as
 * nondeterministic (measured: a legacy query on a session that verified a webhook while it wrote).
 *
 *   const lane = new LocalLane();
 *   await lane.run(() => store.recordSession(record));
 */
import * as wf from '@temporalio/workflow';

export class LocalLane {
  private busy = false;

  async run<T>(call: () => Promise<T>): Promise<T> {
    // Conditions that turn true together resolve together: check again before taking the lane.
    while (this.busy) await wf.condition(() => !this.busy);
    this.busy = true;
    try {
      return await call();
    } finally {
      this.busy = false;
    }
  }
}
