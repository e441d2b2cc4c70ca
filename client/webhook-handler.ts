import type { Client } from '@temporalio/client';
import type { WebhookRejectionReason, WebhookVerification } from '../provider';
import type { StoredState } from '../platform/session-runs';
import { SESSION_ID_PATTERN } from '../common/session-input';
import { routeProviderEvent, type RouteOutcome } from './webhook-router';

export interface WebhookHandling {
  /** HTTP status to answer: 200 only once the event is safely with Temporal. */
  status: 200 | 400 | 401 | 503;
  outcome: RouteOutcome | 'rejected';
  sessionId?: string;
  /** Why the verification refused it (with `detail`, its words). */
  reason?: WebhookRejectionReason;
  detail?: string;
}

/** A signature that does not hold is 401; a signed body paysaga cannot read as an event is 400. */
const STATUS_OF_REJECTION: Record<WebhookRejectionReason, 400 | 401> = {
  missing_signature: 401,
  bad_signature: 401,
  withdrawn_key: 401,
  ill_formed_text: 400,
  malformed_json: 400,
  invalid_event: 400,
};

/**
 * Verify over the raw bytes, then route. A bad signature (or one by a withdrawn key) is 401 and nothing
 * is signaled; a signed body that is not well-formed text (not UTF-8, or a lone surrogate in a JSON
 * string) or not an event is 400; an event for a session with no workflow yet is 503 so the provider
 * delivers it again (never dropped).
 */
export async function handleProviderWebhook(
  raw: Buffer,
  signature: string | undefined,
  deps: {
    verify: (raw: Buffer, sig: string | undefined) => WebhookVerification;
    temporal: Client;
    taskQueue: string;
    /** The store's record of sessions whose workflow is gone (a chargeback months later). */
    stored: StoredState;
  },
): Promise<WebhookHandling> {
  const v = deps.verify(raw, signature);
  if (!v.ok)
    return {
      status: STATUS_OF_REJECTION[v.reason],
      outcome: 'rejected',
      reason: v.reason,
      detail: `${v.reason}: ${v.detail}`,
    };
  // Signed, and well-formed text (the verifier read it once, strictly): what follows uses that reading.
  const sessionId = v.event.session_info.id;
  // The id becomes a workflow id: only a payment session's id may (a signed event with another shape is
  // a provider fault, answered 400 and signaled to nobody).
  if (typeof sessionId !== 'string' || !SESSION_ID_PATTERN.test(sessionId))
    return { status: 400, outcome: 'rejected', detail: 'session_info.id: not a session id (ps_<digits>)' };
  const outcome = await routeProviderEvent(deps.temporal, v.event, {
    taskQueue: deps.taskQueue,
    stored: deps.stored,
    signed: { body: v.body, signature: signature! },
  });
  if (outcome === 'unknown_session') {
    return {
      status: 503,
      outcome,
      sessionId,
      detail: 'no workflow for this session yet; deliver again later',
    };
  }
  return { status: 200, outcome, sessionId };
}
