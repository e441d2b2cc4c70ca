/**
 * When a long-lived workflow continues as new: one rule for every one of them (sessions, subscriptions,
 * references, the reconciler): the server suggests it, or the run's history reached its limit. The
 * limits differ only by how much a run carries over and how often it grows.
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
