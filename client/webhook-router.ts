/**
 * Provider events into Temporal (DESIGN decision 3): a running session gets a signal; a closed one a new
 * run that carries it on, unless it already knew the event's state; a session with no workflow yet must
 * be delivered again later (the receiver answers non-2xx). Card fields never enter Temporal, whatever a
 * provider echoes.
 */
import type { Client } from '@temporalio/client';
import type { ProviderEventDelivery } from '../common/messages';
import { deliverProviderEvent, type DeliveryOutcome, type StoredState } from '../common/session-runs';
import { scrubCardData } from '../provider';
import type { SessionInfo, WebhookEvent } from '../provider/schemas';
import { isNewer } from '../common/snapshot';

export type RouteOutcome = DeliveryOutcome;

export function routeProviderEvent(
  client: Client,
  event: WebhookEvent,
  opts: { taskQueue: string; stored: StoredState; via?: ProviderEventDelivery['via'] },
): Promise<RouteOutcome> {
  const delivery: ProviderEventDelivery = {
    event: scrubCardData(event),
    receivedAt: new Date().toISOString(),
    via: opts.via ?? 'webhook',
  };
  return deliverProviderEvent(
    client,
    opts.taskQueue,
    delivery,
    (state) => isNewer(delivery.event.session_info, state.snapshot),
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
