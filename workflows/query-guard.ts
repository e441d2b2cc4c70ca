/**
 * News is taken only in the workflow task it came with, so that looking never changes what a workflow
 * decides (docs/decisions/018-looking-never-hurts.md).
 *
 * sdk-core (1.24) answers a query that reaches the worker before the workflow task its news asked for
 * by applying that news (a signal, a fired timer, an activity's result) in an activation of its own,
 * with the time of the last task, and keeps the commands for the next task. A replay applies the same
 * news in that next task, at its time and together with whatever else came in it (an Update, more
 * news), so a workflow can decide differently and its history no longer replays. That activation is the
 * only kind that brings events of the history without a workflow task of its own: its time is the last
 * task's while its history is longer, or it carries a signal or a fired timer (which only a task brings).
 * Activations within one task (a batch of older histories, a command resolved at once) keep both time
 * and length, and pass.
 *
 * Such an activation is refused before any of its jobs runs: the query fails with QUERY_CAME_WITH_NEWS
 * (asking again answers), the worker drops its copy of the workflow, and the workflow task that follows
 * replays the history and takes the news as a replay will.
 */
import type { WorkflowInterceptorsFactory } from '@temporalio/workflow';
import { QUERY_CAME_WITH_NEWS } from '../common/messages';

interface TaskMark {
  seconds: string;
  nanos: number;
  historyLength: number;
}

type Activation = Parameters<
  NonNullable<NonNullable<ReturnType<WorkflowInterceptorsFactory>['internals']>[number]['activate']>
>[0]['activation'];

function markOf(activation: Activation): TaskMark {
  return {
    seconds: String(activation.timestamp?.seconds ?? ''),
    nanos: activation.timestamp?.nanos ?? 0,
    historyLength: activation.historyLength ?? 0,
  };
}

/** News applied outside a workflow task of its own: the last task's time, more history or a task's news. */
function outsideATask(activation: Activation, last: TaskMark, now: TaskMark): boolean {
  if (now.seconds !== last.seconds || now.nanos !== last.nanos) return false;
  return (
    now.historyLength !== last.historyLength ||
    (activation.jobs ?? []).some((j) => j.signalWorkflow != null || j.fireTimer != null)
  );
}

export const interceptors: WorkflowInterceptorsFactory = () => {
  let last: TaskMark | undefined;
  return {
    internals: [
      {
        activate(input, next) {
          const { activation, batchIndex } = input;
          const queryOnly = (activation.jobs ?? []).every((j) => j.queryWorkflow != null);
          if (!queryOnly && !batchIndex) {
            const now = markOf(activation);
            if (last && outsideATask(activation, last, now)) throw new Error(QUERY_CAME_WITH_NEWS);
            last = now;
          }
          return next(input);
        },
      },
    ],
  };
};
