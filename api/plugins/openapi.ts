/**
 * The OpenAPI 3.1 document (GET /openapi.json) and Swagger UI (GET /docs), built by @fastify/swagger
 * from the route schemas. Registered at the root of both listeners before their routes, so each sees
 * its own; the internal listener serves one document with the public listener's operations merged in,
 * every operation marked with the listener that serves it (`x-paysaga-listener` and its description).
 */
import swagger, { type SwaggerTransform, type SwaggerTransformObject } from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import type { Listener } from '../listeners';
import { sharedSchemas } from '../schemas';
import { rootPlugin } from './root-plugin';
import { BODY_TOO_LARGE } from '../body-limit';
import { PROTO_KEY } from './json-body';

const description = (v1: Listener) => `Durable payment sessions on Temporal, for the partner's backend.

**Listeners.** The API listens twice. The **public** listener (PAYSAGA_PUBLIC_HOST/PORT) is what the
provider and payers reach: \`/webhooks/provider\` and \`/return/{sessionId}\`. The **internal** listener
(PAYSAGA_INTERNAL_HOST/PORT, loopback by default) serves \`/healthz\`, \`/metrics\`, this document,
\`/docs\` and the codec server \`/codec/*\`. The partner API \`/v1\` is on the **${v1}** listener here
(PAYSAGA_V1_LISTENER). Each operation says which listener serves it; "Try it out" sends to this page's
origin, the internal listener.

**Auth.** Routes under \`/v1\` need \`Authorization: Bearer <token>\` (tokens from PAYSAGA_API_TOKENS);
without it: 401 with \`WWW-Authenticate: Bearer\`. A token carries scopes (\`read\`, \`payments\`,
\`admin\`); a route outside them is 403. Too many refusals from one address: 429. \`/webhooks/provider\` is authenticated by the
provider's signature; \`/return/{sessionId}\` by the token paysaga put in the session's back_url.

**Idempotency.** Every creating route is named by the body's \`reference\` or the \`Idempotency-Key\`
header (used as the reference when the body has none; both given and different: 400). The same name
returns the same session: 201 the first time, then 200 with \`Idempotent-Replayed: true\`.

**Early return.** Creating routes take \`?wait=<ms>\` (0..25000, default 5000): the answer waits for the
payer's action (3-D Secure redirect, FPS QR in \`userAction\`), a decision point or the result.

**Errors.** Always \`{ "error": { "code", "message", "fields"?: [{ "field", "rule" }], "retryable" } }\`:
400 invalid input (nothing was started), 401 auth, 403 a scope the token lacks, 404 unknown session (or
a thing the provider does not know), 405 a method the path does not take (\`Allow\` lists those it
does), 408 and 431 a request not read (not sent in time, or headers past 16 KiB), 409 wrong state, another
request under the reference, or the provider refused (\`provider_refused\`), 413 a body past the limit, 415
a Content-Type paysaga does not read, 429 too many refusals from one address, 500 a fault of paysaga, 502
the provider answered unexpectedly, 503 provider or Temporal unreachable, 504 outcome unknown (retry
with the same Idempotency-Key).

**Bodies.** A body whose fields are all optional may be left out (it reads as \`{}\`). No object in a
JSON body, at any depth (free-form values included), may have a \`${PROTO_KEY}\` key: 400 naming it.
Each object schema's \`propertyNames\` says so too (the webhook and the payer's return read any body).`;

export interface OpenapiOptions {
  /** The listener this instance is: its operations are marked with it. */
  listener: Listener;
  /** Where /v1 is served (said in the document's description). */
  v1Listener: Listener;
  /** Serve /openapi.json and /docs from this instance, with the operations of `others` merged in. */
  serve?: { others: FastifyInstance[] };
}

type Json = Record<string, unknown>;

/** Where a route's query schema waits, between the route's transform and the document's, when it relates parameters. */
const QUERY_RULES = 'x-paysaga-query-rules';
/** JSON Schema keywords that relate an object's properties to one another. */
const RELATING = ['allOf', 'anyOf', 'oneOf', 'not', 'dependentRequired', 'dependentSchemas', 'if'];

// The document is plain JSON; only its paths and components are touched here.
type Doc = {
  paths?: Record<string, Record<string, unknown>>;
  components?: { schemas?: Record<string, unknown> };
};
type Operation = {
  description?: string;
  tags?: string[];
  responses?: Record<string, unknown>;
  parameters?: Json[];
  'x-paysaga-listener'?: Listener;
  [QUERY_RULES]?: Json;
  requestBody?: { required?: boolean; content?: Record<string, { schema?: Record<string, unknown> }> };
};

const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

function markListener(doc: Doc, listener: Listener): void {
  for (const operation of operations(doc)) {
    operation['x-paysaga-listener'] = listener;
    const note = `Served on the **${listener}** listener.`;
    operation.description = operation.description ? `${operation.description}\n\n${note}` : note;
  }
}

function operations(doc: Doc): Operation[] {
  return Object.values(doc.paths ?? {}).flatMap((item) =>
    Object.entries(item)
      .filter(([method, op]) => METHODS.has(method) && typeof op === 'object' && op !== null)
      .map(([, op]) => op as Operation),
  );
}

/**
 * fastify-swagger marks every body required; the routes read a missing body as `{}` (api/http.ts
 * objectBody), so a body with no required field may be left out, and the document says so.
 */
function markOptionalBodies(doc: Doc): void {
  for (const operation of operations(doc)) {
    const body = operation.requestBody;
    const schema = body?.content?.['application/json']?.schema;
    if (!body || !schema) continue;
    // anything that can make `{}` invalid keeps the body required (an empty `required` list does not)
    const requires = Array.isArray(schema.required) ? schema.required.length > 0 : 'required' in schema;
    if (!requires && !['oneOf', 'anyOf', 'allOf', 'if'].some((k) => k in schema)) body.required = false;
  }
}

const BODY_METHODS = new Set(['post', 'put', 'patch', 'delete']);
// Their scopes read a body under any Content-Type (api/plugins/any-content-type.ts) and say their own limit.
const ANY_CONTENT_TYPE_TAGS = new Set(['webhooks', 'payer']);
const apiError = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/ApiError' } } },
});

/**
 * What any request that may carry a body can hear before its route sees it: 413 past the body limit
 * (api/body-limit.ts) and 415 for a Content-Type no parser reads (api/plugins/json-body.ts; fastify's
 * own text/plain). Said here once for every such operation, not route by route (schemathesis found a
 * 415 that no route stated).
 */
function documentBodyRefusals(doc: Doc): void {
  for (const item of Object.values(doc.paths ?? {}))
    for (const [method, op] of Object.entries(item) as [string, Operation][]) {
      if (!BODY_METHODS.has(method) || op.tags?.some((t) => ANY_CONTENT_TYPE_TAGS.has(t))) continue;
      op.responses ??= {};
      op.responses['413'] ??= apiError(BODY_TOO_LARGE);
      op.responses['415'] ??= apiError(
        'A body under a Content-Type paysaga does not read (it reads `application/json`, and `text/plain` as text).',
      );
    }
}

/** Subschemas of a JSON Schema node, under the keywords a request body's schemas use. */
function subschemas(node: Json): Json[] {
  const out: unknown[] = [];
  for (const key of ['properties', 'patternProperties', '$defs'])
    if (node[key] && typeof node[key] === 'object') out.push(...Object.values(node[key] as Json));
  for (const key of ['allOf', 'anyOf', 'oneOf', 'prefixItems'])
    if (Array.isArray(node[key])) out.push(...(node[key] as unknown[]));
  for (const key of ['items', 'additionalProperties', 'not', 'if', 'then', 'else']) out.push(node[key]);
  return out.filter((s): s is Json => typeof s === 'object' && s !== null && !Array.isArray(s));
}

const NO_PROTO_KEY = { not: { const: PROTO_KEY } };

/**
 * The JSON parser refuses a `__proto__` key at any depth (api/plugins/json-body.ts). Every schema of a
 * request body that admits an object (typed `object`, or untyped: any JSON) says so with
 * `propertyNames`; an object nested in a free-form value has no schema of its own, so the document's
 * description says it in words (JSON Schema would need a recursive schema, which generators handle badly).
 */
function documentProtoKeyRefusal(doc: Doc): void {
  const seen = new Set<Json>();
  const visit = (node: Json): void => {
    if (seen.has(node)) return;
    seen.add(node);
    const type = node.type;
    const admitsObject =
      type === undefined
        ? !('$ref' in node || 'const' in node || 'enum' in node)
        : type === 'object' || (Array.isArray(type) && type.includes('object'));
    if (admitsObject) node.propertyNames = NO_PROTO_KEY;
    subschemas(node).forEach(visit);
  };
  for (const operation of operations(doc)) {
    const schema = operation.requestBody?.content?.['application/json']?.schema;
    if (schema) visit(schema);
  }
}

/**
 * What any request can hear from Node's HTTP parser before a route sees it (api/client-errors.ts): 431
 * for a request line and headers past its limit (a long query too), 408 for a request not sent in time.
 * Said here once for every operation of both listeners (schemathesis found a 431 that no route stated).
 */
function documentTransportRefusals(doc: Doc): void {
  for (const operation of operations(doc)) {
    operation.responses ??= {};
    operation.responses['408'] ??= apiError(
      "The request was not sent in time (Node's request timeout); nothing was done.",
    );
    operation.responses['431'] ??= apiError(
      'The request line and headers are longer than Node reads (16 KiB in all, a long query included); nothing was done.',
    );
  }
}

/**
 * Request bodies named by their `title` (docSchema's `name`) become components the operation refers to,
 * so that a client generated from the document has `CardCheckoutRequest`, not `PostV1CheckoutsBodyType0`.
 * The branches of a oneOf are named one by one, and a discriminator maps its values to them.
 */
function nameBodies(doc: Doc): void {
  const schemas = ((doc.components ??= {}).schemas ??= {});
  const named = (schema: Json): Json => {
    const title = schema.title;
    if (typeof title !== 'string') return schema;
    const earlier = schemas[title];
    if (earlier !== undefined && JSON.stringify(earlier) !== JSON.stringify(schema))
      throw new Error(`two different request bodies are named ${title}`);
    schemas[title] = schema;
    return { $ref: `#/components/schemas/${title}` };
  };
  for (const operation of operations(doc)) {
    const content = operation.requestBody?.content?.['application/json'];
    if (!content?.schema) continue;
    const body = content.schema;
    const branches = body.oneOf as Json[] | undefined;
    if (Array.isArray(branches)) {
      body.oneOf = branches.map(named);
      const by = (body.discriminator as { propertyName?: string } | undefined)?.propertyName;
      if (by) {
        const mapping = branches.flatMap((branch, i) => {
          // The branch's value of the discriminator: `const`, or the one-value `enum` swagger makes of it.
          const prop = (branch.properties as Json | undefined)?.[by] as { const?: unknown; enum?: unknown[] };
          const value = prop?.const ?? (prop?.enum?.length === 1 ? prop.enum[0] : undefined);
          const ref = (body.oneOf as Json[])[i]!.$ref;
          return typeof value === 'string' && typeof ref === 'string' ? [[value, ref]] : [];
        });
        body.discriminator = { propertyName: by, mapping: Object.fromEntries(mapping) };
      }
    }
    content.schema = named(body);
  }
}

/**
 * fastify-swagger makes one parameter of each property of a route's query schema, and drops what relates
 * them (events: `session_id` or `subscription_id`, not both; at most one cursor). OpenAPI 3.1 states such
 * rules on one object parameter, serialized `form` and exploded: on the wire the same query, one
 * parameter per property, with the rules in the schema (`not: {required: [...]}`) for readers and tools.
 * The route's transform keeps the query schema of such a route for this step.
 */
function keepQueryRules({ schema, url }: { schema: Json; url: string }): { schema: Json; url: string } {
  const query = schema?.querystring as Json | undefined;
  if (!query || !RELATING.some((k) => k in query)) return { schema, url };
  return { schema: { ...schema, [QUERY_RULES]: query }, url };
}

function queryAsOneParameter(doc: Doc): void {
  for (const operation of operations(doc)) {
    const query = operation[QUERY_RULES];
    if (!query) continue;
    delete operation[QUERY_RULES];
    const required = Array.isArray(query.required) && query.required.length > 0;
    operation.parameters = [
      ...(operation.parameters ?? []).filter((p) => p.in !== 'query'),
      {
        in: 'query',
        name: 'query',
        style: 'form',
        explode: true,
        required,
        description:
          'The query parameters, one per property (`form` style, exploded: `?name=value&other=value`); ' +
          'the schema also states the rules that relate them.',
        schema: query,
      },
    ];
  }
}

function mergeInto(doc: Doc, other: Doc): void {
  doc.paths ??= {};
  for (const [path, item] of Object.entries(other.paths ?? {}))
    doc.paths[path] = { ...doc.paths[path], ...item };
  doc.components ??= {};
  doc.components.schemas = { ...other.components?.schemas, ...doc.components.schemas };
}

export const openapiPlugin = rootPlugin<OpenapiOptions>('paysaga-openapi', async (app, opts) => {
  const others = opts.serve?.others ?? [];
  for (const schema of sharedSchemas) app.addSchema(schema);
  // The merged document reads the other instances' documents, which exist once they are ready.
  if (others.length > 0)
    app.addHook('onReady', async () => void (await Promise.all(others.map((o) => o.ready()))));
  await app.register(swagger, {
    // components.schemas named by $id (ApiError, Session) instead of def-0, def-1.
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`) },
    openapi: {
      openapi: '3.1.0',
      info: { title: 'paysaga API', version: '1', description: description(opts.v1Listener) },
      tags: [
        { name: 'sessions', description: 'Start and follow payment sessions' },
        { name: 'decisions', description: 'Partner decisions on a waiting session' },
        { name: 'subscriptions', description: 'Recurring billing by token: one workflow per subscription' },
        { name: 'events', description: 'Signed events to your backend: endpoints, deliveries, redelivery' },
        { name: 'provider', description: 'Pass-through to the Payment Session Service' },
        { name: 'webhooks', description: 'Provider notifications (public listener)' },
        { name: 'payer', description: 'Pages the payer sees (public listener)' },
        { name: 'operations', description: 'Health, metrics and the codec server (internal listener)' },
      ],
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'One of PAYSAGA_API_TOKENS' },
        },
      },
    },
    transform: keepQueryRules as unknown as SwaggerTransform,
    transformObject: (document) => {
      const doc = (document as { openapiObject: Doc }).openapiObject;
      queryAsOneParameter(doc);
      markListener(doc, opts.listener);
      markOptionalBodies(doc);
      documentBodyRefusals(doc);
      documentProtoKeyRefusal(doc);
      documentTransportRefusals(doc);
      nameBodies(doc);
      for (const other of others) mergeInto(doc, other.swagger() as Doc);
      return doc as ReturnType<SwaggerTransformObject>;
    },
  });
  if (!opts.serve) return;
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
});
