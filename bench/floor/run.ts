/**
 * Runs the floor (bench/floor/workflows.ts) beside paysaga in a benchmark: a worker of its own on the
 * same server, with paysaga's worker settings, and one run = start, three signals, the result.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { DEFAULT_MAX_CACHED_WORKFLOWS } from '../../workers/tuning';
import * as activities from './activities';
import { floorWorkflow, poke, SIGNALS } from './workflows';

export interface Floor {
  /** One floor process, start to result. */
  run(i: number): Promise<void>;
  close(): Promise<void>;
}

export async function startFloor(o: {
  address: string;
  namespace: string;
  client: Client;
  /** The floor's bundle (BenchServer.bundle('floor', require.resolve('./floor/workflows'))). */
  bundlePath: string;
}): Promise<Floor> {
  const taskQueue = `bench-floor-${randomUUID()}`;
  const connection = await NativeConnection.connect({ address: o.address });
  const worker = await Worker.create({
    connection,
    namespace: o.namespace,
    taskQueue,
    workflowBundle: { codePath: o.bundlePath },
    activities,
    // What createPaysagaWorker sets; the task slots are the SDK's defaults in both.
    shutdownGraceTime: '10s',
    maxCachedWorkflows: DEFAULT_MAX_CACHED_WORKFLOWS,
  });
  const running = worker.run();
  return {
    async run(i) {
      const handle = await o.client.workflow.start(floorWorkflow, {
        workflowId: `floor-${taskQueue.slice(-8)}-${i}-${randomUUID().slice(0, 8)}`,
        taskQueue,
      });
      for (let s = 0; s < SIGNALS; s++) await handle.signal(poke);
      await handle.result();
    },
    async close() {
      worker.shutdown();
      await running;
      await connection.close();
    },
  };
}
