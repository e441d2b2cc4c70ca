/**
 * A verified provider event for a session whose workflow has already closed (a chargeback after
 * success, a result after a deadline). It is recorded here, findable and queryable, never dropped.
 */
import * as wf from '@temporalio/workflow';
import { PaymentStatus } from '../workers/search-attributes';
import { closeSession } from './session-lifecycle';
import { SessionRun } from './session-run';
import type { LateEventInput, SessionResult, SessionSettings } from './types';

/** Events of one burst (e.g. a duplicate delivery) land in the same run. */
const QUIET_PERIOD = '30 seconds';

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
  let seen = 0;
  while (await wf.condition(() => run.events.length > seen, seen === 0 ? '1 minute' : QUIET_PERIOD)) {
    seen = run.events.length;
  }
  const chargebacks = run.view().operations.filter((o) => o.kind === 'chargeback');
  const types = [...new Set(run.events.map((e) => e.type))].join(', ');
  run.reason = chargebacks.length
    ? `chargeback: ${chargebacks.map((c) => `${c.id} ${c.amount ?? ''} ${c.currency ?? ''}`.trim()).join('; ')}`
    : `late_event: ${types}`;
  wf.upsertSearchAttributes([
    { key: PaymentStatus, value: chargebacks.length ? 'chargeback' : 'late_event' },
  ]);
  return closeSession(run);
}
