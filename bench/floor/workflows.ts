/**
 * The fixed floor every throughput benchmark compares with
 * (docs/decisions/017-speed-against-a-fixed-floor.md): the least a durable process on Temporal costs. A
 * client starts it, it runs one activity, takes three signals, and completes. It is deliberately not a copy
 * of paysaga's shape (a copy would hide the cost of that shape, which is what the comparison must show).
 * Never change it to look better: results of different days compare only because the floor stays the same.
 */
import * as wf from '@temporalio/workflow';
import type * as activities from './activities';

export const SIGNALS = 3;
export const poke = wf.defineSignal('poke');

const { work } = wf.proxyActivities<typeof activities>({ startToCloseTimeout: '30s' });

export async function floorWorkflow(): Promise<void> {
  let received = 0;
  wf.setHandler(poke, () => void received++);
  await work();
  await wf.condition(() => received >= SIGNALS);
}
