/**
 * Event endpoints over HTTP: where paysaga POSTs signed events (docs/decisions/013-the-backend-is-told.md).
 * Durable in the registry workflow (client/events-client.ts); a secret is shown once, when it is made.
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { endpointId, eventEndpointInput, rotateSecretInput } from '../../client/event-inputs';
import { EventsClient } from '../../client/events-client';
import {
  deletedEventEndpointView,
  eventEndpointListView,
  eventEndpointView,
  eventEndpointWithSecretView,
} from '../../common/event-views';
import { endpoints } from '../../client/http/endpoints';
import type { ApiDeps } from '../deps';
import { objectBody, tableRoute } from '../http';
import { docSchema, errorResponses } from '../schemas';

const idParams = docSchema(z.object({ id: endpointId.describe('Event endpoint id (`we_...`).') }));

const withSecret = (description: string) =>
  docSchema(eventEndpointWithSecretView, { io: 'output', description });

const notFound = { description: 'No such event endpoint.', $ref: 'ApiError#' };
const configured = {
  description: 'The endpoint comes from PAYSAGA_EVENT_ENDPOINTS: change it there.',
  $ref: 'ApiError#',
};

export const eventEndpointRoutes: FastifyPluginAsync<ApiDeps> = async (app, deps) => {
  const events = new EventsClient({ store: deps.store, ...deps.events });
  const tags = ['events'];
  const security = [{ bearerAuth: [] }];
  const idOf = (params: unknown) => (params as { id: string }).id;

  tableRoute(
    app,
    endpoints.createEventEndpoint,
    {
      schema: {
        tags,
        summary: 'Register an event endpoint',
        description:
          'paysaga POSTs every event of the chosen types (all when `events` is omitted) to `url`, signed ' +
          'with the secret in this answer (shown once).',
        security,
        body: docSchema(eventEndpointInput, { name: 'EventEndpointRequest' }),
        response: {
          201: withSecret('Registered (Location: /v1/event-endpoints/{id}).'),
          409: {
            description: 'As many endpoints as PAYSAGA_EVENT_MAX_ENDPOINTS allows exist: delete one first.',
            $ref: 'ApiError#',
          },
          ...errorResponses,
        },
      },
    },
    async (request, reply) => {
      const created = await events.createEndpoint(objectBody(request.body));
      reply.header('location', `/v1/event-endpoints/${created.id}`);
      return reply.code(201).send(created);
    },
  );

  tableRoute(
    app,
    endpoints.listEventEndpoints,
    {
      schema: {
        tags,
        summary: 'List event endpoints',
        security,
        response: {
          200: docSchema(eventEndpointListView, { io: 'output' }),
          ...errorResponses,
        },
      },
    },
    async () => ({ endpoints: await events.listEndpoints() }),
  );

  tableRoute(
    app,
    endpoints.getEventEndpoint,
    {
      schema: {
        tags,
        summary: 'Read an event endpoint',
        security,
        params: idParams,
        response: { 200: docSchema(eventEndpointView, { io: 'output' }), 404: notFound, ...errorResponses },
      },
    },
    async (request) => events.getEndpoint(idOf(request.params)),
  );

  tableRoute(
    app,
    endpoints.deleteEventEndpoint,
    {
      schema: {
        tags,
        summary: 'Delete an event endpoint',
        description: 'Nothing more is sent to it; deliveries still pending there are canceled.',
        security,
        params: idParams,
        response: {
          200: docSchema(deletedEventEndpointView, { io: 'output' }),
          404: notFound,
          409: configured,
          ...errorResponses,
        },
      },
    },
    async (request) => ({ ...(await events.deleteEndpoint(idOf(request.params))), deleted: true }),
  );

  tableRoute(
    app,
    endpoints.rotateEventEndpointSecret,
    {
      schema: {
        tags,
        summary: "Rotate an event endpoint's secret",
        description:
          'Makes a new secret (shown once). The replaced one still signs for `graceMs` (default 24 h): ' +
          'meanwhile every delivery carries a `v1=` for each, so the receiver can switch at any moment.',
        security,
        params: idParams,
        body: docSchema(rotateSecretInput, { name: 'RotateSecretRequest' }),
        response: {
          200: withSecret('The endpoint with its new secret.'),
          404: notFound,
          409: configured,
          ...errorResponses,
        },
      },
    },
    async (request) => events.rotateSecret(idOf(request.params), objectBody(request.body)),
  );
};
