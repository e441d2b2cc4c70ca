/**
 * The messages every session accepts, in two groups its kind's file registers right after making the
 * session: the provider's news (and the payer's return), and what callers read. The kind's own messages
 * (decisions, refunds, the starter's, payouts) are registered by their steps beside them.
 */
import * as wf from '@temporalio/workflow';
import {
  payerReturnedSignal,
  providerEventSignal,
  providerEventsQuery,
  recordedProviderEventsQuery,
  sessionQuery,
} from '../../common/messages';
import type { Session } from '../session';

/** Provider events (webhooks, state syncs, replays: proven before believed) and the payer's return. */
export function acceptProviderNews(session: Session): void {
  wf.setHandler(providerEventSignal, (d) => session.inbox.receive(d));
  wf.setHandler(payerReturnedSignal, () => session.inbox.payerReturned());
}

/**
 * The session, its webhook audit trail and the events kept for replay. Nobody waits on the workflow:
 * callers wait for the session's record in the store (client/reads.ts), so a read never sends it a message.
 */
export function answerReads(session: Session): void {
  wf.setHandler(sessionQuery, () => session.view());
  wf.setHandler(providerEventsQuery, () => session.inbox.audited().records);
  wf.setHandler(recordedProviderEventsQuery, () => session.inbox.audited().recorded);
}
