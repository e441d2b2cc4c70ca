/**
 * Finding sessions and subscriptions: `GET /v1/sessions` and `GET /v1/subscriptions`, a page at a time,
 * each entry a summary read from the workflow's search attributes (client/search.ts: filters, order,
 * one entry per session, the cursor).
 */
import type { FastifyPluginAsync } from 'fastify';
import { sessionSearchInput, subscriptionSearchInput } from '../../client/search';
import { sessionPageView, subscriptionPageView } from '../../common/views';
import { endpoints } from '../../client/http/endpoints';
import type { ApiDeps } from '../deps';
import { tableRoute } from '../http';
import { docSchema, errorResponses } from '../schemas';

const order = (noun: string, open: string) =>
  `Order: ${noun}s whose workflow is still open (${open}) first, the most recently started first; then ` +
  'the others, the most recently closed first (Temporal visibility on SQL stores cannot sort by creation ' +
  `time: use created_from / created_to for a time range). One entry per ${noun}, at its latest workflow ` +
  'run. Page with `cursor` = `next` (with the same filters) while `hasMore`; a page may hold fewer than ' +
  '`limit` entries, even none. Results follow Temporal visibility, a moment behind the workflows.';

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
          'Payment sessions only (never subscriptions, references or event outboxes). Each entry is read ' +
          'from search attributes; GET /v1/sessions/{id} shows the whole session. A parameter that is not ' +
          `one of these, or a bad value, is a 400 naming it. ${order('session', 'in progress, or followed after its result')}`,
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
          'Each entry is read from search attributes; GET /v1/subscriptions/{id} shows the whole ' +
          `subscription. A parameter that is not one of these, or a bad value, is a 400 naming it. ${order('subscription', 'not canceled')}`,
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
