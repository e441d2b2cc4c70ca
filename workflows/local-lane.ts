/**
 * One local activity at a time per workflow: webhook verifications (and the record's writes in runs
 * begun before workflows/session-recorder.ts scheduled them where the change is made). The SDK's core
 * matches recorded local-activity markers to the commands a replay produces in order; two running at once
 * may complete in either order, and a replay that meets them the other way round fails as
 * nondeterministic (measured: a legacy query on a session that verified a webhook while it wrote).
 * Only a verification waits here, and what follows it depends on its result anyway.
 *
 *   const lane = new LocalLane();
 *   const proof = await lane.run(() => proofs.verifyProviderEvent(signed));
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
