/**
 * Signals, updates and queries of the event machinery (the endpoint registry and the per-subject
 * outboxes), defined once and imported by the workflows, the activities and the clients.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { PaysagaEvent } from './events';
import type { DeliveryTarget, EndpointRecord, EventEndpoint } from './event-delivery';
import type { OutboxView } from './event-outbox-types';

// The outbox of one subject (workflows/event-outbox.ts).

/** An event for this subject (deduplicated by id, released in sequence order). */
export const outboxEventSignal = defineSignal<[PaysagaEvent]>('outboxEvent');
/** Send an event again: to one endpoint, or (none given) to every endpoint it was for. */
export const redeliverEventSignal =
  defineSignal<[{ eventId: string; endpointId?: string }]>('redeliverEvent');
/** Every kept event with its deliveries, what is held back and what is still to send. */
export const outboxQuery = defineQuery<OutboxView>('outbox');

// The endpoint registry of a task queue (workflows/event-endpoints.ts).

export interface CreateEndpointArgs {
  id: string;
  url: string;
  events: EventEndpoint['events'];
  description?: string;
  /** Made by the caller (crypto random), never in workflow code. */
  secret: string;
}
export interface RotateSecretArgs {
  id: string;
  secret: string;
  /** How long the replaced secret still signs. */
  graceMs: number;
}
/** An endpoint of PAYSAGA_EVENT_ENDPOINTS: its secret stays in the worker's configuration. */
export type ConfiguredEndpointArgs = Pick<EndpointRecord, 'id' | 'url' | 'events' | 'description'>;

/** Endpoints without secrets. */
export const eventEndpointsQuery = defineQuery<EventEndpoint[]>('eventEndpoints');
/** Url and secrets of one endpoint for a delivery about to be sent; null when it does not exist. */
export const deliveryTargetQuery = defineQuery<DeliveryTarget | null, [string]>('deliveryTarget');
export const createEventEndpointUpdate = defineUpdate<EventEndpoint, [CreateEndpointArgs]>(
  'createEventEndpoint',
);
export const deleteEventEndpointUpdate = defineUpdate<EventEndpoint, [{ id: string }]>('deleteEventEndpoint');
export const rotateEventEndpointSecretUpdate = defineUpdate<EventEndpoint, [RotateSecretArgs]>(
  'rotateEventEndpointSecret',
);
/** Replaces every configured endpoint with these (the API's endpoints stay). */
export const syncConfiguredEndpointsUpdate = defineUpdate<EventEndpoint[], [ConfiguredEndpointArgs[]]>(
  'syncConfiguredEndpoints',
);

/** Failure types the registry's validators refuse with (the client maps them to typed errors). */
export const ENDPOINT_NOT_FOUND = 'EventEndpointNotFound';
export const ENDPOINT_CONFLICT = 'EventEndpointConflict';
