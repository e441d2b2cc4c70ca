/** The one way a session or subscription waits: for `wake`, or up to `ms` when given. */
import * as wf from '@temporalio/workflow';

/** Waits until `wake` holds, or up to `ms` when given; true if woken. */
export async function waitUntil(wake: () => boolean, ms?: number): Promise<boolean> {
  if (ms === undefined) {
    await wf.condition(wake);
    return true;
  }
  const woken = await wf.condition(wake, ms);
  return woken;
}
