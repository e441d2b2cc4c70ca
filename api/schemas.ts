/**
 * JSON schemas for the OpenAPI document, generated from the zod schemas that validate requests
 * (client/inputs.ts) and define answers (common/views.ts): each shape is described once.
 */
import { z } from 'zod';
import { errorEnvelopeView, linksView, sessionView, subscriptionView } from '../common/views';
import { idempotencyHeaders, sessionIdParams, waitQueryInput } from './http';

type Json = Record<string, unknown>;

/** z.instanceof(CardDetails) becomes `{}` (anything): drop it from unions so the plain shape shows. */
function tidy(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(tidy);
  if (!node || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node as Json)) {
    if (k === '$schema') continue;
    out[k] = tidy(v);
  }
  for (const key of ['anyOf', 'oneOf'] as const) {
    const alts = out[key];
    if (!Array.isArray(alts)) continue;
    const kept = alts.filter((a) => !(a && typeof a === 'object' && Object.keys(a as Json).length === 0));
    if (kept.length === 1) {
      // what the union itself says (its `.meta()`) stays over what the one shape says
      const { [key]: _alts, ...own } = out;
      for (const k of Object.keys(out)) delete out[k];
      Object.assign(out, kept[0] as Json, own);
    } else {
      out[key] = kept;
    }
  }
  return out;
}

/**
 * A zod schema as JSON schema: its input side (what a caller sends) unless `io: 'output'`. Rules zod
 * checks in code (a `.refine`) are stated for the document with `.meta({...})` on the same schema.
 */
export function docSchema(
  schema: z.ZodType,
  patch: {
    description?: string;
    optional?: string[];
    extra?: Json;
    io?: 'input' | 'output';
    /** A request body's name: it becomes a component of the document (api/plugins/openapi.ts). */
    name?: string;
  } = {},
): Json {
  const json = tidy(z.toJSONSchema(schema, { io: patch.io ?? 'input', unrepresentable: 'any' })) as Json;
  if (patch.optional && Array.isArray(json.required)) {
    json.required = (json.required as string[]).filter((r) => !patch.optional!.includes(r));
  }
  if (patch.extra) json.properties = { ...patch.extra, ...(json.properties as Json) };
  if (patch.description) json.description = patch.description;
  if (patch.name) json.title = patch.name;
  return json;
}

export const ERROR_REF = { $ref: 'ApiError#' };
export const SESSION_REF = { $ref: 'Session#' };
export const SUBSCRIPTION_REF = { $ref: 'Subscription#' };

const LINKS = docSchema(linksView, { io: 'output' });

/** A view's JSON Schema, generated from its zod schema (common/views.ts), with `links`. */
function resourceSchema(id: string, view: z.ZodObject, description: string): Json {
  const json = tidy(z.toJSONSchema(view, { io: 'output', unrepresentable: 'any' })) as Json;
  return {
    ...json,
    $id: id,
    description,
    properties: { ...(json.properties as Json), links: LINKS },
    required: [...((json.required as string[] | undefined) ?? []), 'links'],
  };
}

/** Shared schemas, added once at the root (fastify-swagger lists them under components.schemas). */
export const sharedSchemas: Json[] = [
  { ...docSchema(errorEnvelopeView, { io: 'output' }), $id: 'ApiError' },
  resourceSchema('Session', sessionView, 'A payment session as its workflow knows it, plus links.'),
  resourceSchema('Subscription', subscriptionView, 'A subscription as its workflow knows it, plus links.'),
];

export const idempotencyHeader = docSchema(idempotencyHeaders);

export const waitQuery = (defaultMs: number) =>
  docSchema(
    waitQueryInput.extend({
      wait: waitQueryInput.shape.wait
        .meta({ default: defaultMs })
        .describe(
          'Early return: wait up to this many ms for the payer action (3-DS, QR), a decision point or ' +
            'the result before answering.',
        ),
    }),
  );

export const sessionParams = docSchema(sessionIdParams);

export const errorResponses = {
  400: {
    description: 'Invalid input: `fields` names each field and rule. Nothing was started.',
    ...ERROR_REF,
  },
  401: { description: 'Missing or wrong bearer token.', ...ERROR_REF },
  403: {
    description: 'The token lacks the scope this route needs (`read`, `payments`, `admin`).',
    ...ERROR_REF,
  },
  429: {
    description: 'Too many refused requests (401, 403) from this address: wait for `Retry-After`.',
    ...ERROR_REF,
  },
  500: { description: 'A fault of paysaga itself.', ...ERROR_REF },
  502: { description: 'The provider answered something paysaga cannot read.', ...ERROR_REF },
  503: { description: 'Provider or Temporal unreachable; retry.', ...ERROR_REF },
  504: { description: 'Outcome unknown: retry with the same Idempotency-Key.', ...ERROR_REF },
};

/** What a request that reaches the provider can also hear: the provider's refusals in the caller's terms. */
export const refusalResponses = {
  404: { description: 'The provider knows no such thing (`fields` names it).', ...ERROR_REF },
  409: {
    description:
      'Not possible now: the provider refused it (`provider_refused`), or the reference names another ' +
      'request (`reference_conflict`).',
    ...ERROR_REF,
  },
};
