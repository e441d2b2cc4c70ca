/**
 * Replaying a session's recorded provider webhooks (`paysaga webhooks replay`, POST
 * /v1/sessions/{id}/provider-events/replay): each event the session recorded (webhooks and state syncs,
 * with their payloads, from its record in the store; a session the store does not know yet is asked with
 * the query `recordedProviderEvents`) goes through the same routing as a webhook
 * (platform/session-runs.ts `deliverProviderEvent`), marked `via: 'replay'`. The outcomes are read from
 * the audit trail in the store: no query reaches a running workflow
 * (docs/decisions/015-paysaga-remembers.md).
 *
 * A replay changes nothing already applied: sessions apply snapshots only forward (common/snapshot.ts
 * isNewer), so a running session records each replayed event in its audit trail as a `duplicate` or
 * `older` one, and a closed run that already knew the state is left closed (`already_known`, nothing
 * started). Only an event the session never applied would be applied now.
 */
import { recordedProviderEventsQuery } from '../common/messages';
import { deliverProviderEvent, type DeliveryOutcome } from '../platform/session-runs';
import type { ProviderEventRecord } from '../common/views';
import { readWebhookEvent } from '../provider/schemas';
import { isNewer } from '../common/snapshot';
import { storedStates } from '../store/sessions';
import type { ClientContext } from './context';
import { SessionNotFoundError } from './errors';
import { queryWithRetry } from './query';
import { readProviderEvents, recordedState } from './reads';
import type { ProviderEventDelivery } from '../common/session-input';

/** One recorded event, replayed. */
export interface ReplayedEvent {
  /** The provider's event type (a webhook's `type`, or `state_sync`). */
  type: string;
  /** When the session first received it, and how. */
  receivedAt: string;
  via: ProviderEventRecord['via'];
  /** The snapshot's `updated_at`. */
  updatedAt?: string;
  /** When the replay delivered it (its `receivedAt` in the audit trail). */
  replayedAt: string;
  /** What the routing did: signaled to the running workflow, a new run, or nothing (already known). */
  delivery: DeliveryOutcome;
  /** What the session made of it, from its audit trail (absent when nothing reached the session). */
  outcome?: ProviderEventRecord['outcome'];
}

export interface ReplayReport {
  sessionId: string;
  events: ReplayedEvent[];
}

/** How long the audit trail is read for the replayed records after the last signal. */
const AUDIT_WAIT_MS = 10_000;

type Replayer = Pick<ClientContext, 'store' | 'temporal' | 'taskQueue'>;

export async function replayProviderEvents(ctx: Replayer, sessionId: string): Promise<ReplayReport> {
  const { temporal, taskQueue } = ctx;
  const stored = storedStates(ctx.store);
  // What the store recorded (whatever Temporal still keeps); a session it does not know yet is asked.
  const recorded =
    (await recordedState(ctx, sessionId))?.recorded ??
    (await queryWithRetry(
      temporal.workflow.getHandle(sessionId),
      recordedProviderEventsQuery,
      () => new SessionNotFoundError(sessionId),
    ));
  // Each replayed event gets its own receive time, so that its record in the audit trail can be found.
  const base = Date.now();
  const events: ReplayedEvent[] = [];
  for (const [i, d] of recorded.entries()) {
    const replayedAt = new Date(base + i).toISOString();
    // A recorded webhook is kept signed (its body was verified when it came), and is read as the receiver
    // reads one; a delivery kept without its signature (a state sync) only makes the session look again
    // (docs/decisions/016-results-are-proven.md).
    const read = d.signed && readWebhookEvent(d.signed.body);
    if (read && !read.ok)
      throw new Error(
        `session ${sessionId}: recorded provider event ${i + 1}: ${read.reason}: ${read.detail}`,
      );
    const heard = read ? read.event : d.event;
    if (!heard) continue;
    const delivery: ProviderEventDelivery = {
      receivedAt: replayedAt,
      via: 'replay',
      ...(d.signed ? { signed: d.signed } : { event: heard }),
    };
    const outcome = await deliverProviderEvent(
      temporal,
      taskQueue,
      sessionId,
      delivery,
      (state) => isNewer(heard.session_info, state.snapshot),
      stored,
    );
    const updatedAt = heard.session_info.updated_at;
    events.push({
      type: heard.type,
      receivedAt: d.receivedAt,
      via: d.via,
      ...(updatedAt ? { updatedAt } : {}),
      replayedAt,
      delivery: outcome,
    });
  }
  await readOutcomes(ctx, sessionId, events);
  return { sessionId, events };
}

/** Fills `outcome` of the events that reached the session from its audit trail (`providerEvents`). */
async function readOutcomes(ctx: Replayer, sessionId: string, events: ReplayedEvent[]): Promise<void> {
  const reached = events.filter((e) => e.delivery === 'signaled' || e.delivery === 'reopened');
  if (reached.length === 0) return;
  const deadline = Date.now() + AUDIT_WAIT_MS;
  for (;;) {
    const audit = await readProviderEvents(ctx, sessionId);
    for (const e of reached) {
      const record = audit.find((r) => r.via === 'replay' && r.receivedAt === e.replayedAt);
      if (record) e.outcome = record.outcome;
    }
    if (reached.every((e) => e.outcome) || Date.now() > deadline) return;
    await new Promise((r) => setTimeout(r, 200));
  }
}
