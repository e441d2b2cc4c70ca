/**
 * Finding sessions and subscriptions: `GET /v1/sessions` and `GET /v1/subscriptions`, a page at a time,
 * each entry a summary read from paysaga's store (client/search.ts: filters, order, the cursor).
 */
import type { FastifyPluginAsync } from 'fastify';
import { sessionSearchInput, subscriptionSearchInput } from '../../client/search';
import { sessionPageView, subscriptionPageView } from '../../common/views';
import { endpoints } from '../../client/http/endpoints';
import type { ApiDeps } from '../deps';
import { tableRoute } from '../http';
import { docSchema, errorResponses } from '../schemas';

const order = (noun: string) =>
  `Order: newest first by creation time (then id), from paysaga's store, a stable order whatever is ` +
  `added meanwhile. One entry per ${noun}. Page with \`cursor\` = \`next\` (with the same filters) while ` +
  '`hasMore`.';

export const searchRoutes: FastifyPluginAsync<ApiDeps> = async (app, deps) => {
  const { payments } = deps;
  const links = (path: string, id: string) => {
    const out: { self: string; temporal?: string } = { self: `/v1/${path}/${encodeURIComponent(id)}` };
    if (deps.temporalUiUrl) {
      const ns = encodeURIComponent(deps.temporal.options.namespace);
      out.temporal = `${deps.temporalUiUrl.replace(/\/+$/, '')}/namespaces/${ns}/workflows/${encodeURIComponent(id)}`;
    }
    return out;
  };

  tableRoute(
    app,
    endpoints.listSessions,
    {
      schema: {
        tags: ['sessions'],
        summary: 'Find sessions by reference, phase, kind and creation time',
        description:
          'Payment sessions only (never subscriptions or references). Each entry is read ' +
          'from the store; GET /v1/sessions/{id} shows the whole session. A parameter that is not ' +
          `one of these, or a bad value, is a 400 naming it. ${order('session')}`,
        security: [{ bearerAuth: [] }],
        querystring: docSchema(sessionSearchInput),
        response: { 200: docSchema(sessionPageView, { io: 'output' }), ...errorResponses },
      },
    },
    async (request) => {
      const page = await payments.sessions.list((request.query ?? {}) as Record<string, string>);
      return {
        ...page,
        sessions: page.sessions.map((s) => ({ ...s, links: links('sessions', s.sessionId) })),
      };
    },
  );

  tableRoute(
    app,
    endpoints.listSubscriptions,
    {
      schema: {
        tags: ['subscriptions'],
        summary: 'Find subscriptions by reference, status and creation time',
        description:
          'Each entry is read from the store; GET /v1/subscriptions/{id} shows the whole ' +
          `subscription. A parameter that is not one of these, or a bad value, is a 400 naming it. ${order('subscription')}`,
        security: [{ bearerAuth: [] }],
        querystring: docSchema(subscriptionSearchInput),
        response: { 200: docSchema(subscriptionPageView, { io: 'output' }), ...errorResponses },
      },
    },
    async (request) => {
      const page = await payments.subscriptions.list((request.query ?? {}) as Record<string, string>);
      return {
        ...page,
        subscriptions: page.subscriptions.map((s) => ({
          ...s,
          links: links('subscriptions', s.subscriptionId),
        })),
      };
    },
  );
};
