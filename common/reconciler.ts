/**
 * The reconciler's contract (workflows/reconciler.ts): its input, what it reports, and its query. One per
 * task queue, `reconciler-<task queue>`. Safe for workflow code.
 */
import { defineQuery } from '@temporalio/workflow';

export interface ReconcilerInput {
  /** Pause between passes over the sessions. */
  everyMs: number;
  /** Sessions created within this window are re-read (older ones are left alone). */
  windowMs: number;
  /** Sessions listed per page (the cursor carries across pages, passes and runs). */
  pageSize: number;
  /**
   * History events after which a run continues as new (default 5000, or when Temporal suggests it);
   * tests set it low to see the cursor cross runs.
   */
  continueAsNewAfter?: number;
}

/** What one session's re-read found. */
export type ReconcileOutcome =
  /** The session already knew the provider's state. */
  | 'in_sync'
  /** The provider showed news the session had missed: it is applied now (signal, or a new run). */
  | 'repaired'
  /** The provider contradicts a final result: reported (session.drift_detected), never rewritten. */
  | 'drift'
  /** The provider could not be read for this session this time: tried again next pass. */
  | 'failed';

export interface DriftRecord {
  sessionId: string;
  at: string;
  outcome: Exclude<ReconcileOutcome, 'in_sync'>;
  detail: string;
}

export interface PassReport {
  startedAt: string;
  finishedAt?: string;
  checked: number;
  inSync: number;
  repaired: number;
  drift: number;
  failed: number;
}

export interface ReconcilerState {
  passes: number;
  /** The pass in progress (its counts so far), and where it is: the page token of the next page. */
  current?: PassReport & { cursor?: string };
  /** The last finished pass. */
  lastPass?: PassReport;
  /** Totals over every pass and run. */
  totals: Omit<PassReport, 'startedAt' | 'finishedAt'>;
  /** The latest sessions found repaired, drifting or failing (at most 50). */
  recent: DriftRecord[];
  /** List calls that failed (Temporal unreachable): the pass waited and went on from its cursor. */
  listFailures: number;
  runs: number;
}

export const reconcilerQuery = defineQuery<ReconcilerState>('reconciler');

export const reconcilerWorkflowId = (taskQueue: string): string => `reconciler-${taskQueue}`;
