/**
 * The paysaga HTTP API on two listeners (docs/decisions/014-two-listeners.md), two fastify instances built
 * from the same plugins. Public: the provider's webhook receiver and the payer's return page. Internal:
 * health, metrics, the OpenAPI document and Swagger UI, the codec server. The partner routes under /v1
 * (bearer token) go on the internal one unless `v1Listener` says public. Plugins do one job each; route
 * schemas sit next to their routes.
 */
import Fastify, {
  LogController,
  type FastifyInstance,
  type FastifyPluginAsync,
  type FastifyReply,
} from 'fastify';
import type { ApiDeps } from './deps';
import { ApiError } from './errors';
import { clientErrorHandler } from './client-errors';
import { refuseBlankParameters } from '../client/search';
import { assertCodecProtected, type ListenAddress, type Listener } from './listeners';
import { authPlugin } from './plugins/auth';
import { drainPlugin } from './plugins/drain';
import { errorsPlugin } from './plugins/errors';
import { jsonBodyPlugin } from './plugins/json-body';
import { methodNotAllowedPlugin } from './plugins/method-not-allowed';
import { createApiMetrics, metricsPlugin } from './plugins/metrics';
import { openapiPlugin } from './plugins/openapi';
import { checkoutRoutes } from './routes/checkouts';
import { codecRoutes } from './routes/codec';
import { eventEndpointRoutes } from './routes/event-endpoints';
import { eventRoutes } from './routes/events';
import { healthRoutes } from './routes/health';
import { reconciliationRoutes } from './routes/reconciliation';
import { replayRoutes } from './routes/replay';
import { returnRoutes } from './routes/return';
import { searchRoutes } from './routes/search';
import { sessionRoutes } from './routes/sessions';
import { subscriptionRoutes } from './routes/subscriptions';
import { tokenRoutes } from './routes/tokens';
import { webhookRoutes } from './routes/webhooks';
import { DEFAULT_PUBLIC_RATE_LIMIT, registerPublicRateLimit } from './plugins/public-rate-limit';
import { BODY_LIMIT_BYTES } from './body-limit';

export type { ApiDeps } from './deps';
export type { ListenAddress, Listener } from './listeners';

export interface ApiUrls {
  publicUrl: string;
  internalUrl: string;
  /** Where /v1 is served: one of the two. */
  v1Url: string;
}

export interface PaysagaApi {
  /** /webhooks/provider and /return/{sessionId} (and /v1 when `v1Listener` is public). */
  public: FastifyInstance;
  /** /healthz, /metrics, /openapi.json, /docs, /codec/* (and /v1 unless `v1Listener` is public). */
  internal: FastifyInstance;
  v1Listener: Listener;
  /**
   * Listens on both addresses (the public one first). Refused before either listens when the codec
   * would be open off loopback (api/listeners.ts); a failure closes what was opened.
   */
  listen(addresses: { public: ListenAddress; internal: ListenAddress }): Promise<ApiUrls>;
  /** Closes both: no new requests, in-flight ones finish. */
  close(): Promise<void>;
}

/** The request as logs show it: the return page's token (`?t=`) is a credential and never logged. */
function loggedRequest(req: {
  method: string;
  url: string;
  host?: string;
  ip?: string;
  socket?: { remotePort?: number };
}) {
  return {
    method: req.method,
    url: req.url.replace(/([?&]t=)[^&#]*/g, '$1[redacted]'),
    host: req.host,
    remoteAddress: req.ip,
    remotePort: req.socket?.remotePort,
  };
}

/** How long a client may take to send a whole request (a slow body holds nothing longer). */
export const REQUEST_TIMEOUT_MS = 30_000;
/** How long a socket may stay silent. */
export const IDLE_SOCKET_TIMEOUT_MS = 120_000;

function newInstance(deps: ApiDeps): FastifyInstance {
  const logger =
    deps.logger && typeof deps.logger === 'object'
      ? { ...deps.logger, serializers: { req: loggedRequest, ...deps.logger.serializers } }
      : (deps.logger ?? false);
  const app = Fastify({
    logger,
    // X-Forwarded-For is read only from the configured proxies (api/trust-proxy.ts); by default never.
    trustProxy: deps.trustProxy?.length ? deps.trustProxy : false,
    // One line per request, written when it is answered (below): by then the auth plugin has named the
    // token (`tokenId`), so every line of a /v1 request says which token acted.
    logController: new LogController({ disableRequestLogging: true }),
    // Request logs carry method, URL and status; fastify never logs bodies or headers by default.
    // A payer's browser may POST back a large 3-DS form; nothing else here needs more.
    bodyLimit: BODY_LIMIT_BYTES,
    // A client has this long to send its whole request (headers and body): a slow-body client cannot
    // hold a socket of the public listener for long (fastify's default, 0, waits for ever).
    requestTimeout: deps.timeouts?.requestMs ?? REQUEST_TIMEOUT_MS,
    // Node enforces it only when the server is made with it (fastify sets it after), and checks on an
    // interval (30 s by default): each second, so it holds to the second.
    http: {
      requestTimeout: deps.timeouts?.requestMs ?? REQUEST_TIMEOUT_MS,
      connectionsCheckingInterval: 1_000,
    },
    // A socket with no traffic either way is closed after this; longer than the longest wait an answer
    // may take (`?wait=` up to MAX_WAIT_MS, a decision's 20 s), so no answer is cut short.
    connectionTimeout: deps.timeouts?.idleMs ?? IDLE_SOCKET_TIMEOUT_MS,
    // Long path parameters reach the routes, which refuse them by their own rules (the return page's
    // 404 page, /v1's error envelope); past this the router refuses them (below).
    routerOptions: { maxParamLength: 2048 },
    // What Node's HTTP parser refuses leaves as the error envelope too (api/client-errors.ts).
    clientErrorHandler,
    // The router's own refusals leave as the error envelope too. An id longer than any route allows
    // names nothing: 404, as an unknown id does, not fastify's bare 414.
    frameworkErrors: (err, _request, reply: FastifyReply) => {
      const tooLong = err.code === 'FST_ERR_MAX_PARAM_LENGTH';
      const api = tooLong
        ? new ApiError(404, 'not_found', 'no such resource: a path parameter is longer than any id')
        : new ApiError(400, 'invalid_request', 'the URL is not valid (malformed percent-encoding)');
      reply.code(api.statusCode).type('application/json; charset=utf-8').send(api.toEnvelope());
    },
  });
  // Validation is zod's (client/inputs.ts and the provider's schemas), in the handlers, so a bad
  // request names the same field and rule as the TypeScript client. The JSON schemas on routes
  // only describe the API for OpenAPI; they are not compiled into validators or serializers.
  // `true` leaves each part as parsed: fastify hands a validator `null` for a missing body, and
  // returning that `value` would make "no body" (read as `{}`) look like a JSON `null` (refused).
  app.addHook('onResponse', async (request, reply) => {
    request.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
  });
  app.setValidatorCompiler(() => () => true);
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  return app;
}

/** The partner routes, registered under /v1 (the deps are not the register options: those carry the prefix). */
const v1Routes =
  (deps: ApiDeps): FastifyPluginAsync =>
  async (v1) => {
    await v1.register(authPlugin, {
      tokens: deps.apiTokens,
      ...(deps.authFailures ? { failures: deps.authFailures } : {}),
    });
    // A query parameter given empty: a 400 naming it, before any route reads it.
    v1.addHook('preHandler', async (request) => {
      refuseBlankParameters((request.query ?? {}) as Record<string, unknown>);
    });
    await v1.register(checkoutRoutes, deps);
    await v1.register(sessionRoutes, deps);
    await v1.register(searchRoutes, deps);
    await v1.register(replayRoutes, deps);
    await v1.register(reconciliationRoutes, deps);
    await v1.register(subscriptionRoutes, deps);
    await v1.register(tokenRoutes, deps);
    await v1.register(eventEndpointRoutes, deps);
    await v1.register(eventRoutes, deps);
  };

export function buildApi(deps: ApiDeps): PaysagaApi {
  const resolved: ApiDeps = {
    ...deps,
    temporalUiUrl: deps.temporalUiUrl ?? (process.env.PAYSAGA_TEMPORAL_UI_URL || undefined),
  };
  const v1Listener: Listener = deps.v1Listener ?? 'internal';
  const metrics = createApiMetrics();
  const publicApp = newInstance(deps);
  const internalApp = newInstance(deps);

  for (const [app, listener] of [
    [publicApp, 'public'],
    [internalApp, 'internal'],
  ] as const) {
    app.register(drainPlugin);
    app.register(errorsPlugin, { metrics });
    app.register(methodNotAllowedPlugin);
    app.register(jsonBodyPlugin);
    app.register(metricsPlugin, { metrics, serve: listener === 'internal' });
    app.register(openapiPlugin, {
      listener,
      v1Listener,
      ...(listener === 'internal' ? { serve: { others: [publicApp] } } : {}),
    });
  }

  // PAYSAGA_PUBLIC_RATE_LIMIT: requests per address per minute on the public listener (false: none).
  if (deps.publicRateLimit !== false)
    registerPublicRateLimit(publicApp, deps.publicRateLimit ?? DEFAULT_PUBLIC_RATE_LIMIT);
  publicApp.register(webhookRoutes, { ...resolved, metrics });
  publicApp.register(returnRoutes, resolved);

  internalApp.register(healthRoutes, { temporal: deps.temporal });
  if (deps.codec) {
    internalApp.register(codecRoutes, {
      codec: deps.codec,
      tokens: deps.codecTokens ?? [],
      corsOrigins: deps.codecCorsOrigins ?? [],
    });
  }

  const v1App = v1Listener === 'public' ? publicApp : internalApp;
  v1App.register(v1Routes(resolved), { prefix: '/v1' });

  const close = async () => {
    await Promise.all([publicApp.close(), internalApp.close()]);
  };
  return {
    public: publicApp,
    internal: internalApp,
    v1Listener,
    async listen(addresses) {
      assertCodecProtected({
        codec: !!deps.codec,
        tokens: deps.codecTokens ?? [],
        host: addresses.internal.host,
      });
      try {
        const publicUrl = await publicApp.listen(addresses.public);
        const internalUrl = await internalApp.listen(addresses.internal);
        return { publicUrl, internalUrl, v1Url: v1Listener === 'public' ? publicUrl : internalUrl };
      } catch (err) {
        await close();
        throw err;
      }
    },
    close,
  };
}
