/**
 * Event endpoints over HTTP: where paysaga POSTs signed events (DESIGN decision 13). Durable in the
 * registry workflow (client/events-client.ts); a secret is shown once, when it is made.
 */
import type { FastifyPluginAsync } from 'fastify';
import { EVENT_TYPES } from '../../common/events';
import { z } from 'zod';
import { endpointId, eventEndpointInput, rotateSecretInput } from '../../client/event-inputs';
import { EventsClient } from '../../client/events-client';
import { endpoints } from '../../client/http/endpoints';
import type { ApiDeps } from '../deps';
import { objectBody, tableRoute } from '../http';
import { docSchema, errorResponses } from '../schemas';

const idParams = docSchema(z.object({ id: endpointId.describe('Event endpoint id (`we_...`).') }));

export const EVENT_ENDPOINT_SCHEMA = {
  type: 'object',
  description: 'An event endpoint (never with its secret, except when the secret is made).',
  required: ['id', 'url', 'events', 'createdAt', 'source'],
  properties: {
    id: { type: 'string', description: '`we_...` (API) or `we_cfg_...` (PAYSAGA_EVENT_ENDPOINTS).' },
    url: { type: 'string', format: 'uri' },
    events: {
      type: ['array', 'null'],
      items: { type: 'string', enum: [...EVENT_TYPES] },
      description: 'The event types it receives; null: every type.',
    },
    description: { type: 'string' },
    createdAt: { type: 'string', format: 'date-time' },
    source: { type: 'string', enum: ['api', 'config'] },
    secretRotatedAt: { type: 'string', format: 'date-time' },
    previousSecretExpiresAt: {
      type: 'string',
      format: 'date-time',
      description: 'During a rotation: until when the replaced secret still signs.',
    },
  },
};

const withSecret = (description: string) => ({
  ...EVENT_ENDPOINT_SCHEMA,
  description,
  required: [...EVENT_ENDPOINT_SCHEMA.required, 'secret'],
  properties: {
    ...EVENT_ENDPOINT_SCHEMA.properties,
    secret: {
      type: 'string',
      description:
        '`whsec_...`: the HMAC key of `Paysaga-Signature` (api/README.md, "Verifying events"). Shown only now.',
    },
  },
});

const notFound = { description: 'No such event endpoint.', $ref: 'ApiError#' };
const configured = {
  description: 'The endpoint comes from PAYSAGA_EVENT_ENDPOINTS: change it there.',
  $ref: 'ApiError#',
};

export const eventEndpointRoutes: FastifyPluginAsync<ApiDeps> = async (app, deps) => {
  const events = new EventsClient({ temporal: deps.temporal, taskQueue: deps.taskQueue });
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
        body: docSchema(eventEndpointInput),
        response: { 201: withSecret('Registered (Location: /v1/event-endpoints/{id}).'), ...errorResponses },
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
          200: { type: 'object', properties: { endpoints: { type: 'array', items: EVENT_ENDPOINT_SCHEMA } } },
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
        response: { 200: EVENT_ENDPOINT_SCHEMA, 404: notFound, ...errorResponses },
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
          200: {
            ...EVENT_ENDPOINT_SCHEMA,
            description: 'The endpoint as it was, with `deleted: true`.',
            properties: { ...EVENT_ENDPOINT_SCHEMA.properties, deleted: { type: 'boolean' } },
          },
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
        body: docSchema(rotateSecretInput),
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
