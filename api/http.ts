/** Small request/response helpers shared by the partner routes. */
import type { Client } from '@temporalio/client';
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  RouteHandlerMethod,
  RouteShorthandOptions,
} from 'fastify';
import { z } from 'zod';
import { InputValidationError } from '../client/errors';
import { reference as referenceSchema } from '../client/inputs';
import { endpoints, type Route } from '../client/http/endpoints';
import type { Started } from '../client/reads';
import type { SessionView } from '../common/views';

export const MAX_WAIT_MS = 25_000;

/** zod parse that fails as InputValidationError, fields prefixed (e.g. `query.wait` -> `wait`). */
export function parse<S extends z.ZodType>(schema: S, value: unknown, prefix = ''): z.output<S> {
  const r = schema.safeParse(value);
  if (!r.success) throw InputValidationError.fromZod(r.error, prefix);
  return r.data;
}

/** The body as a plain object (no body at all reads as `{}`; a JSON `null` is no object). */
export function objectBody(body: unknown): Record<string, unknown> {
  if (body === undefined) return {};
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new InputValidationError([{ field: '(body)', rule: 'a JSON object' }]);
  return body as Record<string, unknown>;
}

/** `?wait=<ms>` for early return, bounded so a request never hangs near proxy timeouts. */
export const waitQueryInput = z.object({ wait: z.coerce.number().int().min(0).max(MAX_WAIT_MS).optional() });

export function waitMs(query: unknown, defaultMs: number): number {
  return parse(waitQueryInput, query ?? {}).wait ?? defaultMs;
}

/** The Idempotency-Key header: a reference (withReference below). */
export const idempotencyHeaders = z.object({
  'idempotency-key': referenceSchema
    .optional()
    .describe(
      'Used as the `reference` when the body has none. The same key returns the same session. ' +
        'When both are given they must be equal.',
    ),
});

const sessionId = z
  .string()
  .regex(/^[A-Za-z0-9_.:-]{1,128}$/, 'a session id (ps_...)')
  .describe('Session id (ps_...)');
export const sessionIdParams = z.object({ id: sessionId });

export function sessionIdParam(params: unknown): string {
  return parse(sessionIdParams, params).id;
}

/**
 * The reference of a creating request: the body's `reference`, else the Idempotency-Key header.
 * Both given and different is a mistake the caller must hear about (which one did they mean?).
 * Returns the body with the reference filled in.
 */
export function withReference(
  request: FastifyRequest,
  body: Record<string, unknown>,
): Record<string, unknown> {
  const header = request.headers['idempotency-key'];
  if (header === undefined) return body;
  if (Array.isArray(header))
    throw new InputValidationError([{ field: 'Idempotency-Key', rule: 'send the header once' }]);
  const key = referenceSchema.safeParse(header);
  if (!key.success)
    throw new InputValidationError(
      key.error.issues.map((i) => ({ field: 'Idempotency-Key', rule: i.message })),
    );
  if (body.reference !== undefined && body.reference !== header)
    throw new InputValidationError([
      { field: 'reference', rule: 'must equal the Idempotency-Key header when both are given' },
    ]);
  return { ...body, reference: header };
}

/** When neither names the request, say both ways of naming it. */
export async function explainMissingReference<T>(
  body: Record<string, unknown>,
  run: () => Promise<T>,
): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof InputValidationError && body.reference === undefined) {
      throw new InputValidationError(
        err.fields.map((f) =>
          f.field === 'reference'
            ? { field: 'reference', rule: 'required: send a reference field or an Idempotency-Key header' }
            : f,
        ),
      );
    }
    throw err;
  }
}

export interface LinkOptions {
  temporal: Client;
  temporalUiUrl?: string;
}

export function withLinks(
  view: SessionView,
  o: LinkOptions,
): SessionView & { links: Record<string, string> } {
  const links: Record<string, string> = { self: `/v1/sessions/${encodeURIComponent(view.sessionId)}` };
  if (o.temporalUiUrl) {
    const ns = encodeURIComponent(o.temporal.options.namespace);
    links.temporal = `${o.temporalUiUrl.replace(/\/+$/, '')}/namespaces/${ns}/workflows/${encodeURIComponent(view.sessionId)}`;
  }
  return { ...view, links };
}

/**
 * 201 for a session this request created, 200 (and `Idempotent-Replayed: true`) for one an earlier
 * request with the same reference created: the reference's workflow says which (no clocks compared).
 */
export function sendCreated(reply: FastifyReply, view: Started<SessionView>, o: LinkOptions): FastifyReply {
  reply.header('location', `/v1/sessions/${encodeURIComponent(view.sessionId)}`);
  if (!view.created) reply.header('idempotent-replayed', 'true');
  return reply.code(view.created ? 201 : 200).send(withLinks(view, o));
}

/** A route of the HTTP client's table as fastify names it under the /v1 prefix (`{id}` -> `:id`). */
export function v1Url(route: { path: string }): string {
  return route.path.replace(/^\/v1(?=\/)/, '').replace(/\{(\w+)\}/g, ':$1');
}

/** Each route of the table by its name there (`createCheckout`): the operationId clients are generated with. */
const ROUTE_NAMES = new Map<unknown, string>(Object.entries(endpoints).map(([name, r]) => [r, name]));

/**
 * Registers a partner route from the route table the HTTP client sends by (client/http/endpoints.ts):
 * the method and path are the table's, so the API and its client cannot drift apart, and the table's
 * name is the operation's id in the OpenAPI document (a generated client calls it `create_checkout`).
 */
export function tableRoute<P, B, O>(
  app: FastifyInstance,
  route: Route<P, B, O>,
  opts: RouteShorthandOptions,
  handler: RouteHandlerMethod,
): void {
  const operationId = ROUTE_NAMES.get(route);
  if (!operationId) throw new Error(`${route.method} ${route.path} is not in the route table`);
  app.route({
    ...opts,
    schema: { ...opts.schema, operationId },
    method: route.method,
    url: v1Url(route),
    handler,
    config: { ...opts.config, scope: route.scope },
  });
}
