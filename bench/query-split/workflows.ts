/**
 * The smallest workflow that shows sdk-core's query path applying new events with an old clock
 * (docs/limits.md, "A query can split a workflow task"): it waits for one signal, then takes one of two
 * steps by how long the wait took. Deterministic as Temporal defines it: its only clock is `Date.now()`.
 */
import * as wf from '@temporalio/workflow';
import type * as activities from './activities';

export const go = wf.defineSignal('go');
/** A wait longer than this is "late": the workflow sleeps a moment before its activity. */
export const LATE_MS = 1_000;

const { step } = wf.proxyActivities<typeof activities>({ startToCloseTimeout: '10s' });

export async function splitWorkflow(): Promise<string> {
  let signaled = false;
  wf.setHandler(go, () => void (signaled = true));
  const waitFrom = Date.now();
  await wf.condition(() => signaled);
  const waited = Date.now() - waitFrom;
  if (waited > LATE_MS) await wf.sleep(1);
  await step();
  return waited > LATE_MS ? 'late' : 'on time';
}
