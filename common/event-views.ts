/**
 * What the API answers about events, event endpoints and their deliveries
 * (docs/decisions/013-the-backend-is-told.md), in zod: the TypeScript types of the answers are inferred from
 * these schemas and the OpenAPI document is generated from them (api/schemas.ts), so each shape is described
 * once. Workflows import types only.
 */
import { z } from 'zod';
import { EVENT_TYPES, type PaysagaEvent } from './events';

const isoTime = z.string().describe('ISO 8601 time');

export const eventView = z
  .object({
    id: z.string().describe('`evt_<subject>_<sequence>`: the same change always has the same id'),
    type: z.enum(EVENT_TYPES),
    created: isoTime,
    session_id: z.string().optional(),
    subscription_id: z.string().optional(),
    sequence: z.number().int().describe('1, 2, 3, ... per session or subscription: the delivery order'),
    data: z
      .unknown()
      .meta({ type: 'object', additionalProperties: true })
      .describe('The session (or subscription) at that moment'),
  })
  .describe('An event, exactly as it is POSTed to endpoints');
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** The compiler checks that PaysagaEvent (common/events.ts, generic in `data` for workflows) is this view. */
export const EVENT_TYPE_IS_THE_VIEW: Same<PaysagaEvent, z.infer<typeof eventView>> = true;

export const eventListView = z.object({
  events: z.array(eventView),
  hasMore: z.boolean().describe('More events follow: ask again with `after` = `next`'),
  next: z.string().optional().describe('The last event id listed: `after` of the next page'),
});
export type EventList = z.infer<typeof eventListView>;

export const eventEndpointView = z
  .object({
    id: z.string().describe('`we_...` (API) or `we_cfg_...` / the configured id (PAYSAGA_EVENT_ENDPOINTS)'),
    url: z.string().describe('where events are POSTed'),
    events: z.array(z.enum(EVENT_TYPES)).nullable().describe('The event types it receives; null: every type'),
    description: z.string().optional(),
    createdAt: isoTime,
    source: z.enum(['api', 'config']).describe('registered by the API, or by PAYSAGA_EVENT_ENDPOINTS'),
    secretRotatedAt: isoTime.optional().describe('when the current secret was made by a rotation'),
    previousSecretExpiresAt: isoTime
      .optional()
      .describe('During a rotation: until when the replaced secret still signs'),
  })
  .describe('An event endpoint (never with its secret, except when the secret is made)');
export type EventEndpoint = z.infer<typeof eventEndpointView>;

export const eventEndpointWithSecretView = eventEndpointView.extend({
  secret: z
    .string()
    .describe(
      '`whsec_...`: the HMAC key of `Paysaga-Signature` (api/README.md, "Verifying events"). Shown only now',
    ),
});
export type EventEndpointWithSecret = z.infer<typeof eventEndpointWithSecretView>;

export const deletedEventEndpointView = eventEndpointView
  .extend({ deleted: z.literal(true) })
  .describe('The endpoint as it was, with `deleted: true`');

export const eventEndpointListView = z.object({ endpoints: z.array(eventEndpointView) });

export const deliveryAttemptView = z.object({
  at: isoTime.describe('when the request was sent'),
  latencyMs: z.number().int().describe('from sending to the answer (or to the failure)'),
  status: z.number().int().optional().describe('The HTTP status, when an answer came'),
  error: z.string().optional().describe('Why no answer came (timeout, connection refused, ...)'),
  redelivery: z.boolean().optional().describe('sent because someone asked for a redelivery'),
});
export type DeliveryAttempt = z.infer<typeof deliveryAttemptView>;

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'canceled'] as const;

export const endpointDeliveryView = z.object({
  endpointId: z.string(),
  url: z.string().optional().describe('the endpoint URL, while it is registered'),
  status: z
    .enum(DELIVERY_STATUSES)
    .describe(
      'pending: being sent or retried; delivered: a 2xx came; failed: no 2xx within the retry window; ' +
        'canceled: the endpoint was deleted',
    ),
  queuedAt: isoTime.describe('when this round of delivery was queued (released, or a redelivery)'),
  attempts: z.array(deliveryAttemptView).describe('The latest 100 attempts, oldest first'),
  attemptCount: z.number().int().describe('every attempt ever made, including those no longer listed'),
  nextAttemptAt: isoTime.optional().describe('while pending: when the next attempt is due'),
  deliveredAt: isoTime.optional(),
  failedAt: isoTime.optional(),
  redeliveries: z.number().int().describe('how many times a redelivery was asked for'),
});
export type EndpointDeliveryView = z.infer<typeof endpointDeliveryView>;

export const eventDeliveriesView = z.object({
  eventId: z.string(),
  state: z
    .enum(['held', 'released'])
    .describe(
      'held: waiting for an earlier sequence number of its subject; released: queued to its endpoints',
    ),
  releasedAt: isoTime.optional(),
  late: z.boolean().optional().describe('Sent after later sequence numbers (its own had been given up on)'),
  deliveries: z.array(endpointDeliveryView),
});
export type EventDeliveries = z.infer<typeof eventDeliveriesView>;

export const redeliveryAcceptedView = z.object({
  eventId: z.string(),
  endpoints: z.array(z.string()).describe('the endpoints it is sent to again'),
});
export type RedeliveryAccepted = z.infer<typeof redeliveryAcceptedView>;
