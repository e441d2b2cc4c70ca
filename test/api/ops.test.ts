/**
 * What every route shares: bearer auth on /v1 (401 with WWW-Authenticate, nothing started), and the
 * operational routes of the internal listener: /healthz (Temporal reachable or not), /metrics, /docs,
 * /openapi.json (which covers both listeners and says which serves what).
 */
import { Client, Connection } from '@temporalio/client';
import { request } from 'undici';
import { buildApi } from '../../api/app';
import {
  apiDepsFor,
  card,
  FRICTIONLESS,
  listenLocally,
  ref,
  rub,
  useApiStack,
  workflowsFor,
} from './api-stack';

jest.setTimeout(60_000);

const s = useApiStack();

// [method, path] of every /v1 route, with ids that need not exist (auth comes before anything else).
const V1: ['GET' | 'POST', string][] = [
  ['POST', '/v1/checkouts'],
  ['POST', '/v1/payouts'],
  ['POST', '/v1/identity-checks'],
  ['POST', '/v1/fps-bindings'],
  ['GET', '/v1/sessions/ps_1'],
  ['POST', '/v1/sessions/ps_1/approve'],
  ['POST', '/v1/sessions/ps_1/cancel'],
  ['POST', '/v1/sessions/ps_1/finalize'],
  ['POST', '/v1/sessions/ps_1/refunds'],
  ['POST', '/v1/public-tokens'],
  ['GET', '/v1/banks'],
  ['POST', '/v1/token-info'],
  ['POST', '/v1/recurring-tokens/disable'],
];

describe('bearer auth on /v1', () => {
  it.each(V1)('%s %s: 401 without a token and with a wrong one', async (method, path) => {
    const none = await s.call(method, path, { token: null, ...(method === 'POST' ? { body: {} } : {}) });
    expect(none.status).toBe(401);
    expect(none.headers['www-authenticate']).toBe('Bearer realm="paysaga"');
    expect(none.body.error).toMatchObject({ code: 'unauthorized', retryable: false });
    const wrong = await s.call(method, path, {
      token: 'not-the-token',
      ...(method === 'POST' ? { body: {} } : {}),
    });
    expect(wrong.status).toBe(401);
    expect(wrong.headers['www-authenticate']).toMatch(/error="invalid_token"/);
  });

  it('a valid checkout without a token starts nothing; Basic auth is not accepted', async () => {
    const reference = ref('noauth');
    const before = (await s.stack.sandbox.stats()).stats.sessions;
    const body = { method: 'card', reference, amount: rub(100), card: card(FRICTIONLESS) };
    expect((await s.call('POST', '/v1/checkouts', { body, token: null })).status).toBe(401);
    const basic = await s.call('POST', '/v1/checkouts', {
      body,
      token: null,
      headers: { authorization: `Basic ${Buffer.from(`x:${s.token}`).toString('base64')}` },
    });
    expect(basic.status).toBe(401);
    expect((await s.stack.sandbox.stats()).stats.sessions).toBe(before);
    expect(await workflowsFor(s, reference)).toBe(0);
  });

  it('the operational routes need no token', async () => {
    for (const path of ['/healthz', '/metrics', '/openapi.json', '/docs']) {
      expect((await s.call('GET', path, { token: null })).status).toBe(200);
    }
  });
});

describe('GET /healthz', () => {
  it('200 when Temporal answers', async () => {
    const res = await s.call('GET', '/healthz', { token: null });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok', temporal: 'ok' });
  });

  it('503 when Temporal cannot be reached', async () => {
    // A lazy connection to a port nothing listens on: the check fails within its deadline.
    const connection = Connection.lazy({ address: '127.0.0.1:1' });
    const temporal = new Client({ connection });
    const app = buildApi({
      ...apiDepsFor(s.stack),
      temporal,
      apiTokens: ['t'],
    });
    try {
      const { internalUrl } = await listenLocally(app);
      const res = await request(`${internalUrl}/healthz`);
      expect(res.statusCode).toBe(503);
      expect(await res.body.json()).toMatchObject({ status: 'unavailable' });
    } finally {
      await app.close();
      await connection.close().catch(() => undefined);
    }
  });
});

describe('GET /metrics', () => {
  it('Prometheus text: default metrics and requests by route pattern (never by session id)', async () => {
    await s.call('GET', '/v1/sessions/ps_424242');
    const res = await request(`${s.url}/metrics`);
    const text = await res.body.text();
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/plain/);
    expect(text).toContain('process_cpu_user_seconds_total');
    expect(text).toMatch(
      /paysaga_http_requests_total\{method="GET",route="\/v1\/sessions\/:id",status_code="404"\} \d+/,
    );
    expect(text).toContain('paysaga_http_request_duration_seconds_bucket');
    expect(text).toContain('# TYPE paysaga_webhooks_received_total counter');
    expect(text).not.toContain('ps_424242');
  });
});

describe('API documentation', () => {
  it('GET /openapi.json: OpenAPI 3.1 with every route, bearer auth, Idempotency-Key and the error envelope', async () => {
    const res = await s.call('GET', '/openapi.json', { token: null });
    expect(res.status).toBe(200);
    const doc = res.body;
    expect(doc.openapi).toBe('3.1.0');
    const paths = Object.keys(doc.paths);
    for (const p of [
      '/v1/checkouts',
      '/v1/payouts',
      '/v1/identity-checks',
      '/v1/fps-bindings',
      '/v1/sessions/{id}',
      '/v1/sessions/{id}/approve',
      '/v1/sessions/{id}/cancel',
      '/v1/sessions/{id}/finalize',
      '/v1/sessions/{id}/refunds',
      '/v1/public-tokens',
      '/v1/banks',
      '/v1/token-info',
      '/v1/recurring-tokens/disable',
      '/webhooks/provider',
      '/return/{sessionId}',
      '/healthz',
    ]) {
      expect(paths).toContain(p);
    }
    expect(paths).not.toContain('/return');
    // Which listener serves what: marked on every operation, and said in its description.
    const listenerOf = (path: string, method: string) => doc.paths[path][method]['x-paysaga-listener'];
    expect(listenerOf('/webhooks/provider', 'post')).toBe('public');
    expect(listenerOf('/return/{sessionId}', 'get')).toBe('public');
    expect(listenerOf('/return/{sessionId}', 'post')).toBe('public');
    expect(listenerOf('/v1/checkouts', 'post')).toBe('internal');
    expect(listenerOf('/healthz', 'get')).toBe('internal');
    expect(doc.paths['/webhooks/provider'].post.description).toContain('**public** listener');
    expect(doc.info.description).toContain('`/v1` is on the **internal** listener');
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.components.schemas.ApiError.properties.error.properties.fields).toBeDefined();
    const checkout = doc.paths['/v1/checkouts'].post;
    expect(checkout.security).toEqual([{ bearerAuth: [] }]);
    expect(checkout.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`)).toEqual(
      expect.arrayContaining(['header:idempotency-key', 'query:wait']),
    );
    // Request bodies are named components (generated clients read like written ones).
    const named = (schema: { $ref?: string }) => doc.components.schemas[schema.$ref!.split('/').pop()!];
    const body = checkout.requestBody.content['application/json'].schema;
    expect(body.oneOf.map((v: { $ref: string }) => v.$ref)).toEqual([
      '#/components/schemas/CardCheckoutRequest',
      '#/components/schemas/PaymentFormCheckoutRequest',
      '#/components/schemas/FpsCheckoutRequest',
      '#/components/schemas/RecurringCheckoutRequest',
    ]);
    expect(body.discriminator.mapping.card).toBe('#/components/schemas/CardCheckoutRequest');
    const variants = body.oneOf.map(named);
    expect(variants).toHaveLength(4);
    const cardVariant = variants.find((v: { properties: { method: { enum?: string[]; const?: string } } }) =>
      (v.properties.method.enum ?? [v.properties.method.const]).includes('card'),
    );
    expect(cardVariant.properties.card.properties.card_number).toBeDefined();
    expect(checkout.responses['400'].content['application/json'].schema.$ref).toBe(
      '#/components/schemas/ApiError',
    );
    expect(doc.paths['/webhooks/provider'].post.security).toBeUndefined();
  });

  it('every request body is a named component, or a choice of named components', async () => {
    const doc = (await s.call('GET', '/openapi.json', { token: null })).body;
    const anonymous: string[] = [];
    type Op = { requestBody?: { content?: Record<string, { schema?: { oneOf?: object[] } }> } };
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Op>>))
      for (const [method, op] of Object.entries(item)) {
        const schema = op?.requestBody?.content?.['application/json']?.schema;
        if (!schema) continue;
        const refs = schema.oneOf ?? [schema];
        if (
          !refs.every(
            (r: { $ref?: string }) =>
              typeof r.$ref === 'string' && doc.components.schemas[r.$ref.split('/').pop()!],
          )
        )
          anonymous.push(`${method.toUpperCase()} ${path}`);
      }
    expect(anonymous).toEqual([]);
    // A named body that is a choice names each alternative too (TokenStateRequest: CardInfoTokenState, ...).
    // (A oneOf of rules only, like SubscriptionRequest's "schedule or intervalMs", is not a choice of shapes.)
    type Alternative = { $ref?: string; type?: string; properties?: object };
    const schemas = doc.components.schemas as Record<string, { oneOf?: Alternative[] }>;
    const unnamedChoices = Object.entries(schemas)
      .filter(([, schema]) => schema.oneOf?.some((alt) => !alt.$ref && (alt.type || alt.properties)))
      .map(([name]) => name);
    expect(unnamedChoices).toEqual([]);
    expect(schemas.TokenStateRequest).toMatchObject({
      discriminator: { mapping: { recurring_token: '#/components/schemas/RecurringTokenState' } },
    });
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining(['PayoutRequest', 'PayoutBatchRequest', 'RefundRequest', 'SubscriptionRequest']),
    );
  });

  it('a body under a Content-Type paysaga does not read is a 415 every body-taking operation documents', async () => {
    const doc = (await s.call('GET', '/openapi.json', { token: null })).body;
    type Op = { tags?: string[]; responses: Record<string, unknown> };
    const refused: string[] = [];
    const undocumented: string[] = [];
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Op>>))
      for (const [method, op] of Object.entries(item)) {
        if (!['post', 'delete'].includes(method)) continue;
        // The webhook receiver and the payer's page read any Content-Type (test/api/webhooks-return).
        if (op.tags?.includes('webhooks') || op.tags?.includes('payer')) continue;
        const url = `${s.url}${path.replace(/\{[^}]+\}/g, 'ps_1')}`;
        for (const contentType of ['application/xml', 'sR-']) {
          const res = await request(url, {
            method: method.toUpperCase() as 'POST',
            body: '{}',
            headers: { authorization: `Bearer ${s.token}`, 'content-type': contentType },
          });
          const body = (await res.body.json()) as { error?: { code?: string } };
          if (res.statusCode !== 415 || body.error?.code !== 'unsupported_media_type')
            refused.push(`${method} ${path} ${contentType}: ${res.statusCode}`);
        }
        if (!op.responses['415'] || !op.responses['413']) undocumented.push(`${method} ${path}`);
      }
    expect(refused).toEqual([]);
    expect(undocumented).toEqual([]);
  });

  it('GET /docs: Swagger UI', async () => {
    const res = await request(`${s.url}/docs`, { maxRedirections: 0 } as never);
    const status = res.statusCode;
    const html = await res.body.text();
    expect([200, 302]).toContain(status);
    if (status === 200) expect(html).toContain('Swagger UI');
    const init = await request(`${s.url}/docs/static/swagger-initializer.js`);
    expect(init.statusCode).toBe(200);
    await init.body.dump();
  });
});
