/**
 * Events over HTTP: list and read what paysaga told (or will tell) backends, every delivery attempt,
 * and redelivery. Events are kept by their subject's outbox (client/events-client.ts).
 */
import type { FastifyPluginAsync } from 'fastify';
import { EVENT_TYPES } from '../../common/events';
import { z } from 'zod';
import { eventIdInput, listEventsInput, redeliverInput } from '../../client/event-inputs';
import { EventsClient } from '../../client/events-client';
import { endpoints } from '../../client/http/endpoints';
import type { ApiDeps } from '../deps';
import { objectBody, tableRoute } from '../http';
import { docSchema, errorResponses } from '../schemas';

const idParams = docSchema(z.object({ id: eventIdInput.describe('Event id: `evt_<subject>_<sequence>`.') }));

export const EVENT_SCHEMA = {
  type: 'object',
  description: 'An event, exactly as it is POSTed to endpoints.',
  required: ['id', 'type', 'created', 'sequence', 'data'],
  properties: {
    id: {
      type: 'string',
      description: '`evt_<subject>_<sequence>`: the same change always has the same id.',
    },
    type: { type: 'string', enum: [...EVENT_TYPES] },
    created: { type: 'string', format: 'date-time' },
    session_id: { type: 'string' },
    subscription_id: { type: 'string' },
    sequence: {
      type: 'integer',
      description: '1, 2, 3, ... per session or subscription: the delivery order.',
    },
    data: {
      type: 'object',
      additionalProperties: true,
      description: 'The session (or subscription) at that moment.',
    },
  },
};

const ATTEMPT = {
  type: 'object',
  properties: {
    at: { type: 'string', format: 'date-time' },
    latencyMs: { type: 'integer' },
    status: { type: 'integer', description: 'The HTTP status, when an answer came.' },
    error: { type: 'string', description: 'Why no answer came (timeout, connection refused, ...).' },
    redelivery: { type: 'boolean' },
  },
};

const DELIVERIES = {
  type: 'object',
  properties: {
    eventId: { type: 'string' },
    state: {
      type: 'string',
      enum: ['held', 'released'],
      description: 'held: waiting for an earlier sequence number of its subject.',
    },
    releasedAt: { type: 'string', format: 'date-time' },
    late: {
      type: 'boolean',
      description: 'Sent after later sequence numbers (its own had been given up on).',
    },
    deliveries: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          endpointId: { type: 'string' },
          url: { type: 'string' },
          status: { type: 'string', enum: ['pending', 'delivered', 'failed', 'canceled'] },
          queuedAt: { type: 'string', format: 'date-time' },
          attempts: { type: 'array', items: ATTEMPT, description: 'The latest 100 attempts, oldest first.' },
          attemptCount: { type: 'integer' },
          nextAttemptAt: { type: 'string', format: 'date-time' },
          deliveredAt: { type: 'string', format: 'date-time' },
          failedAt: { type: 'string', format: 'date-time' },
          redeliveries: { type: 'integer' },
        },
      },
    },
  },
};

const notFound = { description: 'No such event (or no longer kept).', $ref: 'ApiError#' };

export const eventRoutes: FastifyPluginAsync<ApiDeps> = async (app, deps) => {
  const events = new EventsClient({ temporal: deps.temporal, taskQueue: deps.taskQueue });
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
          "With `session_id` or `subscription_id`: that subject's events by sequence. Without: the events " +
          'of up to 200 subjects with recent events (narrow with `after`), by (created, subject, sequence). ' +
          "`after` (an event id, or an ISO time) pages forward: pass the answer's `next`.",
        security,
        querystring: docSchema(listEventsInput),
        response: {
          200: {
            type: 'object',
            properties: {
              events: { type: 'array', items: EVENT_SCHEMA },
              hasMore: { type: 'boolean' },
              next: { type: 'string', description: 'The last event id listed: `after` of the next page.' },
            },
          },
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
        response: { 200: EVENT_SCHEMA, 404: notFound, ...errorResponses },
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
        response: { 200: DELIVERIES, 404: notFound, ...errorResponses },
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
          'the other events to that endpoint. Works after the outbox has closed, as long as the event is kept.',
        security,
        params: idParams,
        body: docSchema(redeliverInput),
        response: {
          202: {
            type: 'object',
            properties: {
              eventId: { type: 'string' },
              endpoints: { type: 'array', items: { type: 'string' } },
            },
          },
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
