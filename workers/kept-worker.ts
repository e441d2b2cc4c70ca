/**
 * A Temporal worker kept at work: when sdk-core loses a workflow task (workers/lost-task.ts), the worker
 * would stop taking workflow tasks for good, so a new one (made the same way) takes its place. The old
 * one is asked to stop and not waited for: the task it lost may hold it.
 */
import type { Worker } from '@temporalio/worker';
import { onLostWorkflowTask } from './lost-task';

export interface KeptWorker {
  /** The worker at work now. */
  readonly current: Worker;
  /** How many times the worker was replaced. */
  readonly replaced: number;
  /** Settles when the worker at work stops (by {@link KeptWorker.shutdown} or a shutdown signal). */
  readonly done: Promise<void>;
  /** Stops the worker at work (graceful: in-flight activities finish); `done` settles after. */
  shutdown(): void;
}

export function keepWorker(
  first: Worker,
  create: () => Promise<Worker>,
  /** Told each time the worker is replaced, and why. */
  warn: (message: string) => void,
): KeptWorker {
  let current = first;
  let replaced = 0;
  let stopping = false;
  const done = (async () => {
    for (;;) {
      if (stopping) {
        // Made while the previous one was being replaced: run it only to stop it.
        await current.runUntil(Promise.resolve());
        return;
      }
      let lost!: () => void;
      const lostTask = new Promise<'lost'>((resolve) => (lost = () => resolve('lost')));
      const unsubscribe = onLostWorkflowTask(lost);
      const running = current.run();
      try {
        const ended = await Promise.race([running.then(() => 'stopped' as const), lostTask]);
        if (ended === 'stopped' || stopping) return await running;
      } finally {
        unsubscribe();
      }
      warn(
        'the Temporal SDK lost a workflow task (a query met a task of a run waiting for a cache slot): ' +
          'this worker would take no more workflow tasks, so a new one takes its place',
      );
      if (current.getState() === 'RUNNING') current.shutdown();
      running.catch(() => undefined);
      current = await create();
      replaced++;
    }
  })();
  return {
    get current() {
      return current;
    },
    get replaced() {
      return replaced;
    },
    done,
    shutdown() {
      stopping = true;
      if (current.getState() === 'RUNNING') current.shutdown();
    },
  };
}
