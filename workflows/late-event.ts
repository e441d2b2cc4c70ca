/**
 * A verified provider event for a session whose workflow has already closed (a chargeback after
 * success, a result after a deadline). It is recorded here, findable and queryable, never dropped.
 */
import * as wf from '@temporalio/workflow';
import { PaymentStatus } from '../common/search-attributes';
import { closeSession } from './session-lifecycle';
import { SessionRun } from './session-run';
import type { LateEventInput, SessionResult, SessionSettings } from './types';

export async function lateEventWorkflow(
  input: LateEventInput,
  settings: SessionSettings,
): Promise<SessionResult> {
  const run = new SessionRun({
    sessionId: input.sessionId,
    kind: 'late_event',
    reference: input.sessionId,
    settings,
  });
  const chargebacks = () => run.view().operations.filter((o) => o.kind === 'chargeback');
  // Events of one burst (a duplicate delivery, a refund's events) land in the same run: it stays
  // open while events keep coming, as long as the workflow waits for a late event elsewhere.
  const quietMs = Math.max(settings.polling.lateAfterMs, 1_000);
  let seen = 0;
  while (await wf.condition(() => run.events.length > seen, seen === 0 ? '1 minute' : quietMs)) {
    seen = run.events.length;
    // Findable at once (the session run sets PaymentStatus to the snapshot's phase; this wins).
    const status = chargebacks().length ? 'chargeback' : 'late_event';
    wf.upsertSearchAttributes([{ key: PaymentStatus, value: status }]);
  }
  const found = chargebacks();
  const types = [...new Set(run.events.map((e) => e.type))].join(', ');
  run.reason = found.length
    ? `chargeback: ${found.map((c) => `${c.id} ${c.amount ?? ''} ${c.currency ?? ''}`.trim()).join('; ')}`
    : `late_event: ${types}`;
  return closeSession(run);
}
