/**
 * The OpenAPI 3.1 document (GET /openapi.json) and Swagger UI (GET /docs), built by @fastify/swagger
 * from the route schemas. Registered at the root before the routes, so it sees all of them.
 */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { sharedSchemas } from '../schemas';
import { rootPlugin } from './root-plugin';

const DESCRIPTION = `Durable payment sessions on Temporal, for the partner's backend.

**Auth.** Routes under \`/v1\` need \`Authorization: Bearer <token>\` (tokens from PAYSAGA_API_TOKENS);
without it: 401 with \`WWW-Authenticate: Bearer\`. \`/webhooks/provider\` is authenticated by the
provider's signature; \`/return/{session_id}\` is for the payer's browser.

**Idempotency.** Every creating route is named by the body's \`reference\` or the \`Idempotency-Key\`
header (used as the reference when the body has none; both given and different: 400). The same name
returns the same session: 201 the first time, then 200 with \`Idempotent-Replayed: true\`.

**Early return.** Creating routes take \`?wait=<ms>\` (0..25000, default 5000): the answer waits for the
payer's action (3-D Secure redirect, FPS QR in \`userAction\`), a decision point or the result.

**Errors.** Always \`{ "error": { "code", "message", "fields"?: [{ "field", "rule" }], "retryable" } }\`:
400 invalid input (nothing was started), 401 auth, 404 unknown session, 409 wrong state, 502 the
provider refused (\`code\` = its error_code), 503 provider or Temporal unreachable, 504 outcome unknown
(retry with the same Idempotency-Key).`;

export const openapiPlugin = rootPlugin('paysaga-openapi', async (app) => {
  for (const schema of sharedSchemas) app.addSchema(schema);
  await app.register(swagger, {
    // components.schemas named by $id (ApiError, Session) instead of def-0, def-1.
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`) },
    openapi: {
      openapi: '3.1.0',
      info: { title: 'paysaga API', version: '1', description: DESCRIPTION },
      tags: [
        { name: 'sessions', description: 'Start and follow payment sessions' },
        { name: 'decisions', description: 'Partner decisions on a waiting session' },
        { name: 'subscriptions', description: 'Recurring billing by token: one workflow per subscription' },
        { name: 'events', description: 'Signed events to your backend: endpoints, deliveries, redelivery' },
        { name: 'provider', description: 'Pass-through to the Payment Session Service' },
        { name: 'webhooks', description: 'Provider notifications' },
        { name: 'payer', description: 'Pages the payer sees' },
        { name: 'operations', description: 'Health and metrics' },
      ],
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'One of PAYSAGA_API_TOKENS' },
        },
      },
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
});
