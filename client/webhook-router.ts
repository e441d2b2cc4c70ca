/**
 * Provider events into Temporal (docs/decisions/003-webhooks-accelerate-state-is-truth.md): a running session
 * gets a signal; a closed one a new run that carries it on, unless it already knew the event's state; a
 * session with no workflow yet must be delivered again later (the receiver answers non-2xx). Card fields
 * never enter Temporal, whatever a provider echoes.
 */
import type { Client } from '@temporalio/client';
import { deliverProviderEvent, type DeliveryOutcome, type StoredState } from '../platform/session-runs';
import { scrubCardData } from '../provider';
import type { SessionInfo, WebhookEvent } from '../provider/schemas';
import { isNewer } from '../common/snapshot';
import type { ProviderEventDelivery } from '../common/session-input';

export type RouteOutcome = DeliveryOutcome;

/**
 * `signed`: the webhook's raw body and signature, which travel to the session so that its worker
 * verifies them again (docs/decisions/016-results-are-proven.md). A body that names card fields never enters
 * Temporal: the session is then told only what was heard, and reads transaction/state itself.
 */
export function routeProviderEvent(
  client: Client,
  event: WebhookEvent,
  opts: {
    taskQueue: string;
    stored: StoredState;
    via?: ProviderEventDelivery['via'];
    /** The body as the verifier decoded it (strict UTF-8: it encodes back to exactly the signed bytes). */
    signed?: { body: string; signature: string };
  },
): Promise<RouteOutcome> {
  const heard = scrubCardData(event);
  const travels = opts.signed && JSON.stringify(heard) === JSON.stringify(event);
  const delivery: ProviderEventDelivery = {
    receivedAt: new Date().toISOString(),
    via: opts.via ?? 'webhook',
    ...(travels
      ? { signed: { body: opts.signed!.body, signature: opts.signed!.signature } }
      : { event: heard }),
  };
  return deliverProviderEvent(
    client,
    opts.taskQueue,
    event.session_info.id,
    delivery,
    (state) => isNewer(event.session_info, state.snapshot),
    opts.stored,
  );
}

/**
 * The provider's truth about a session, routed as if it were a webhook (`via: 'sync'`): what the
 * reconciler does for every finished session, available for one session at a time.
 */
export async function syncSessionFromProvider(
  client: Client,
  provider: { state(body: { session_id: string }): Promise<{ session_info: SessionInfo }> },
  sessionId: string,
  opts: { taskQueue: string; stored: StoredState },
): Promise<RouteOutcome> {
  const { session_info } = await provider.state({ session_id: sessionId });
  return routeProviderEvent(client, { type: 'state_sync', session_info }, { ...opts, via: 'sync' });
}
