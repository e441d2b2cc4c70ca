import { getClient } from '@temporalio/activity';
import { syncSessionFromProvider, type RouteOutcome } from '../client/webhook-router';
import type { ProviderClient } from '../provider';
import { toFailure } from './failures';
import type { SessionSettings } from '../workflows/types';

/** Kinds whose sessions can change after their workflow closed (refunds, chargebacks of a payment). */
const PAYMENT_KINDS = [
  'card_checkout',
  'payment_form',
  'recurring_payment',
  'fps_payment',
  'refund',
  'late_event',
];

export interface ReconcileActivities {
  /** Ids of payment sessions whose latest workflow run closed after `closedAfter` (ISO time). */
  listClosedPaymentSessions(closedAfter: string, limit: number): Promise<string[]>;
  /** The provider's state of the session, routed like a webhook (late events are recorded). */
  syncSession(sessionId: string): Promise<RouteOutcome | 'running'>;
}

/**
 * For deployments without webhooks: nothing polls a session once its workflow has closed, so a
 * chargeback or a late result would go unseen. These activities let a reconciler find recently
 * closed sessions (Temporal visibility) and read each one's truth from the provider.
 */
export function createReconcileActivities(deps: {
  provider: ProviderClient;
  taskQueue: string;
  settings: SessionSettings;
}): ReconcileActivities {
  return {
    async listClosedPaymentSessions(closedAfter, limit) {
      const kinds = PAYMENT_KINDS.map((k) => `'${k}'`).join(', ');
      const query =
        `TaskQueue = '${deps.taskQueue}' AND ExecutionStatus != 'Running' AND ` +
        `CloseTime > '${new Date(closedAfter).toISOString()}' AND PaymentKind IN (${kinds})`;
      const ids = new Set<string>();
      for await (const wf of getClient().workflow.list({ query })) {
        ids.add(wf.workflowId);
        if (ids.size >= limit) break;
      }
      return [...ids];
    },
    async syncSession(sessionId) {
      try {
        // A running workflow follows the session itself (it polls, or it is the late-event run that
        // already holds the newest state): signaling it again would only keep it busy.
        const { status } = await getClient().workflow.getHandle(sessionId).describe();
        if (status.name === 'RUNNING') return 'running';
        return await syncSessionFromProvider(getClient(), deps.provider, sessionId, {
          taskQueue: deps.taskQueue,
          settings: deps.settings,
        });
      } catch (err) {
        // A refusal (e.g. a session the provider does not know) fails this session only, at once;
        // what retrying can fix is retried by the activity's policy.
        throw toFailure(err);
      }
    },
  };
}
