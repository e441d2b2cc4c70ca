/**
 * When a long-lived workflow continues as new: one rule for every one of them (sessions, subscriptions,
 * references, the reconciler): the server suggests it, or the run's history reached its limit. The
 * limits differ only by how much a run carries over and how often it grows. And how: on the build
 * Temporal now routes new work to, when a new one was made current (`nextRunOnCurrentBuild`).
 */
import * as wf from '@temporalio/workflow';

export const HISTORY_LIMITS = {
  /** A session's run: hours of polling in an outage, many webhooks (its input may set a lower one). */
  session: 8_000,
  /** A subscription's run: its charges are followed as they happen, even mid-charge past this. */
  subscription: 8_000,
  /** A reference kept for 400 days: each repeat of its request is one small Update. */
  reference: 2_000,
  /** The reconciler: a pass over every open session, then a pause. */
  reconciler: 5_000,
} as const;

/** The run's history is long enough to continue as new. */
export function historyLong(limit: number): boolean {
  const info = wf.workflowInfo();
  return info.continueAsNewSuggested || info.historyLength >= limit;
}

/**
 * Continues as new, carrying `args`. A run is pinned to the build that started it; when Temporal says a
 * new build is now the target, the next run starts on it (upgrade on continue-as-new,
 * docs/decisions/019-every-worker-is-versioned.md). Call it only where the workflow holds nothing in
 * flight: between billing periods, between reconciliation passes.
 */
export function nextRunOnCurrentBuild<F extends wf.Workflow>(...args: Parameters<F>): Promise<never> {
  const upgrade = wf.workflowInfo().targetWorkerDeploymentVersionChanged;
  return wf.makeContinueAsNewFunc<F>(upgrade ? { initialVersioningBehavior: 'AUTO_UPGRADE' } : {})(...args);
}
