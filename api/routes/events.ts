/**
 * Events over HTTP: list and read what paysaga told (or will tell) backends, every delivery attempt,
 * and redelivery. Events are rows of the store (client/events-client.ts, store/events.ts).
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { eventIdInput, listEventsInput, redeliverInput } from '../../client/event-inputs';
import { EventsClient } from '../../client/events-client';
import {
  eventDeliveriesView,
  eventListView,
  eventView,
  redeliveryAcceptedView,
} from '../../common/event-views';
import { endpoints } from '../../client/http/endpoints';
import type { ApiDeps } from '../deps';
import { objectBody, tableRoute } from '../http';
import { docSchema, errorResponses } from '../schemas';

const idParams = docSchema(z.object({ id: eventIdInput.describe('Event id: `evt_<subject>_<sequence>`.') }));

const notFound = { description: 'No such event (or no longer kept).', $ref: 'ApiError#' };

export const eventRoutes: FastifyPluginAsync<ApiDeps> = async (app, deps) => {
  const events = new EventsClient({ store: deps.store, ...deps.events });
  const tags = ['events'];
  const security = [{ bearerAuth: [] }];
  const idOf = (params: unknown) => (params as { id: string }).id;

  tableRoute(
    app,
    endpoints.listEvents,
    {
      schema: {
        tags,
        summary: 'List events, oldest first',
        description:
          "Events in the store's global order, oldest first (a subject's events by sequence within it), " +
          'filtered by `session_id` or `subscription_id` and `type`. Page forward with `starting_after` (or ' +
          "`after`, which also takes an ISO time) = the answer's `next`, backward with `ending_before`.",
        security,
        querystring: docSchema(listEventsInput),
        response: {
          200: docSchema(eventListView, { io: 'output' }),
          404: { description: 'A cursor names an event this API does not know.', $ref: 'ApiError#' },
          ...errorResponses,
        },
      },
    },
    async (request) => events.listEvents(request.query ?? {}),
  );

  tableRoute(
    app,
    endpoints.getEvent,
    {
      schema: {
        tags,
        summary: 'Read an event',
        security,
        params: idParams,
        response: { 200: docSchema(eventView, { io: 'output' }), 404: notFound, ...errorResponses },
      },
    },
    async (request) => events.getEvent(idOf(request.params)),
  );

  tableRoute(
    app,
    endpoints.getEventDeliveries,
    {
      schema: {
        tags,
        summary: "An event's deliveries: every attempt per endpoint",
        security,
        params: idParams,
        response: { 200: docSchema(eventDeliveriesView, { io: 'output' }), 404: notFound, ...errorResponses },
      },
    },
    async (request) => events.getDeliveries(idOf(request.params)),
  );

  tableRoute(
    app,
    endpoints.redeliverEvent,
    {
      schema: {
        tags,
        summary: 'Send an event again',
        description:
          'To `endpointId`, or to every endpoint it was for; retried like any delivery, in order with ' +
          'the other events to that endpoint. Works for any event the store still keeps.',
        security,
        params: idParams,
        body: docSchema(redeliverInput, { name: 'RedeliverRequest' }),
        response: {
          202: docSchema(redeliveryAcceptedView, { io: 'output' }),
          404: notFound,
          409: { description: 'Not released yet, or no endpoint wants it.', $ref: 'ApiError#' },
          ...errorResponses,
        },
      },
    },
    async (request, reply) =>
      reply.code(202).send(await events.redeliver(idOf(request.params), objectBody(request.body))),
  );
};
