/**
 * The reconciler's activities (workflows/reconciler.ts): list the sessions to re-read a page at a time
 * (from the store, with a cursor), and compare one session with the provider's truth, delivering
 * what it missed the way a webhook would (docs/decisions/003-webhooks-accelerate-state-is-truth.md).
 */
import { getClient } from '@temporalio/activity';
import { MONEY_KINDS, type SessionPhase } from '../common/kinds';
import type { Store } from '../store/database';
import { searchSessions, sessionState, storedStates, type SessionCursor } from '../store/sessions';
import type { ReconcileOutcome } from '../common/reconciler';
import { recordPass, type PassRecord } from '../store/reconciliation';
import { deliverProviderEvent, latestRun } from '../platform/session-runs';
import { scrubCardData, type ProviderClient } from '../provider';
import type { SessionView } from '../common/views';
import type { SessionInfo } from '../provider/schemas';
import { contradictsResult, phaseOf } from '../common/snapshot';
import { toFailure } from './failures';

export interface SessionPage {
  sessionIds: string[];
  /** Page token of the next page (base64), absent on the last page. */
  next?: string;
}

export interface ReconcileActivities {
  /** Final money-moving sessions created after `createdAfter`, newest first, one page from `cursor`. */
  listSessions(a: { createdAfter: string; pageSize: number; cursor?: string }): Promise<SessionPage>;
  /** The provider's state of the session against the session's own; news is delivered to it. */
  reconcileSession(sessionId: string): Promise<{ outcome: ReconcileOutcome; detail?: string }>;
  /** The pass so far and the page's findings, into the store (GET /v1/reconciliation reads them). */
  recordReconciliation(record: Omit<PassRecord, 'taskQueue'>): Promise<void>;
}

/** A page's cursor: the (created_at, id) of its last session. */
function decodeCursor(cursor: string): SessionCursor | undefined {
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(cursor, 'base64').toString('utf8')) as [string, string];
    return { createdAt: new Date(createdAt), id };
  } catch {
    return undefined;
  }
}

export function createReconcileActivities(deps: {
  provider: ProviderClient;
  taskQueue: string;
  store: Store;
  /** Whether `next` is news to a session that knows `current` (common/snapshot.ts isNewer). */
  isNewer: (next: SessionInfo, current: SessionInfo | undefined) => boolean;
}): ReconcileActivities {
  return {
    async listSessions({ createdAfter, pageSize, cursor }) {
      const after = cursor ? decodeCursor(cursor) : undefined;
      const states = await searchSessions(
        deps.store,
        { kinds: MONEY_KINDS, final: true, createdFrom: new Date(createdAfter) },
        { limit: pageSize, ...(after ? { after } : {}) },
      );
      const last = states.at(-1);
      const next =
        states.length === pageSize && last
          ? Buffer.from(JSON.stringify([last.createdAt, last.sessionId])).toString('base64')
          : undefined;
      return { sessionIds: states.map((state) => state.sessionId), ...(next ? { next } : {}) };
    },

    async recordReconciliation(record) {
      await recordPass(deps.store, { ...record, taskQueue: deps.taskQueue });
    },

    async reconcileSession(sessionId) {
      const client = getClient();
      let truth: SessionInfo;
      try {
        // Read under the session's own project (several projects: PAYSAGA_PROJECTS).
        const projectId = (await sessionState(deps.store, sessionId))?.request.projectId;
        truth = scrubCardData(
          (await deps.provider.state({ session_id: sessionId }, projectId ? { projectId } : {})).session_info,
        );
      } catch (err) {
        throw toFailure(err);
      }
      const run = await latestRun(client, sessionId, storedStates(deps.store));
      if (run.status === 'unknown') return { outcome: 'failed', detail: 'no workflow for this session' };
      let known: SessionInfo | undefined;
      let ended: SessionPhase | undefined;
      if (run.status === 'closed') {
        known = run.state.snapshot;
        ended = run.state.final?.phase;
      } else {
        const view = await run.handle.query<SessionView>('session');
        known = view.lastSnapshot;
        ended = view.final ? view.phase : undefined;
      }
      if (!deps.isNewer(truth, known)) return { outcome: 'in_sync' };
      // The session does not take the reconciler's word either: a sync makes it read the state itself.
      const outcome = await deliverProviderEvent(
        client,
        deps.taskQueue,
        sessionId,
        {
          event: { type: 'state_sync', session_info: truth },
          receivedAt: new Date().toISOString(),
          via: 'sync',
        },
        (state) => deps.isNewer(truth, state.snapshot),
        storedStates(deps.store),
      );
      const detail = `${outcome}: provider ${truth.transaction_status}, ${truth.updated_at ?? ''}`.trim();
      // A provider that now contradicts the session's final result (another result, or an operation
      // begun after it) is drift the session reports (session.drift_detected); any other news is a
      // repair. The same rule as the session's own (common/snapshot.ts contradictsResult).
      const contradicts = ended !== undefined && contradictsResult(ended, phaseOf(truth));
      return { outcome: contradicts ? 'drift' : 'repaired', detail };
    },
  };
}
