/**
 * The paysaga HTTP API: partner routes under /v1 (bearer token), the provider's webhook receiver,
 * the payer's return page, health, metrics and the OpenAPI document. Plugins do one job each;
 * route schemas sit next to their routes.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import type { ApiDeps } from './deps';
import { authPlugin } from './plugins/auth';
import { drainPlugin } from './plugins/drain';
import { errorsPlugin } from './plugins/errors';
import { jsonBodyPlugin } from './plugins/json-body';
import { createApiMetrics, metricsPlugin } from './plugins/metrics';
import { openapiPlugin } from './plugins/openapi';
import { checkoutRoutes } from './routes/checkouts';
import { codecRoutes } from './routes/codec';
import { eventEndpointRoutes } from './routes/event-endpoints';
import { eventRoutes } from './routes/events';
import { healthRoutes } from './routes/health';
import { returnRoutes } from './routes/return';
import { sessionRoutes } from './routes/sessions';
import { subscriptionRoutes } from './routes/subscriptions';
import { tokenRoutes } from './routes/tokens';
import { webhookRoutes } from './routes/webhooks';

export type { ApiDeps } from './deps';

export function buildApi(deps: ApiDeps): FastifyInstance {
  const resolved: ApiDeps = {
    ...deps,
    temporalUiUrl: deps.temporalUiUrl ?? (process.env.PAYSAGA_TEMPORAL_UI_URL || undefined),
  };
  const app = Fastify({
    logger: deps.logger ?? false,
    // Request logs carry method, URL and status; fastify never logs bodies or headers by default.
    // A payer's browser may POST back a large 3-DS form; nothing else here needs more.
    bodyLimit: 1024 * 1024,
  });

  // Validation is zod's (client/inputs.ts and the provider's schemas), in the handlers, so a bad
  // request names the same field and rule as the TypeScript client. The JSON schemas on routes
  // only describe the API for OpenAPI; they are not compiled into validators or serializers.
  app.setValidatorCompiler(() => (value) => ({ value }));
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));

  const metrics = createApiMetrics();
  app.register(drainPlugin);
  app.register(errorsPlugin);
  app.register(jsonBodyPlugin);
  app.register(metricsPlugin, { metrics });
  app.register(openapiPlugin);

  app.register(healthRoutes, { temporal: deps.temporal });
  app.register(
    async (v1) => {
      await v1.register(authPlugin, { tokens: deps.apiTokens });
      await v1.register(checkoutRoutes, resolved);
      await v1.register(sessionRoutes, resolved);
      await v1.register(subscriptionRoutes, resolved);
      await v1.register(tokenRoutes, resolved);
      await v1.register(eventEndpointRoutes, resolved);
      await v1.register(eventRoutes, resolved);
    },
    { prefix: '/v1' },
  );
  app.register(webhookRoutes, { ...resolved, metrics });
  app.register(returnRoutes, resolved);
  if (deps.codec) {
    app.register(codecRoutes, {
      codec: deps.codec,
      tokens: deps.codecTokens ?? [],
      corsOrigins: deps.codecCorsOrigins ?? [],
    });
  }
  return app;
}
