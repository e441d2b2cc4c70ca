/**
 * JSON schemas for the OpenAPI document. Validation itself is done by the zod schemas of
 * client/inputs.ts (see app.ts): these describe the same shapes, generated from zod where zod can.
 */
import { z } from 'zod';

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
      delete out[key];
      Object.assign(out, kept[0] as Json);
    } else {
      out[key] = kept;
    }
  }
  return out;
}

/** The input side of a zod schema (what a caller sends) as JSON schema. */
export function docSchema(
  schema: z.ZodType,
  patch: { description?: string; optional?: string[]; extra?: Json } = {},
): Json {
  const json = tidy(z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' })) as Json;
  if (patch.optional && Array.isArray(json.required)) {
    json.required = (json.required as string[]).filter((r) => !patch.optional!.includes(r));
  }
  if (patch.extra) json.properties = { ...patch.extra, ...(json.properties as Json) };
  if (patch.description) json.description = patch.description;
  return json;
}

export const ERROR_REF = { $ref: 'ApiError#' };
export const SESSION_REF = { $ref: 'Session#' };

/** Shared schemas, added once at the root (fastify-swagger lists them under components.schemas). */
export const sharedSchemas: Json[] = [
  {
    $id: 'ApiError',
    type: 'object',
    description: 'Every error answer of the API.',
    required: ['error'],
    properties: {
      error: {
        type: 'object',
        required: ['code', 'message', 'retryable'],
        properties: {
          code: {
            type: 'string',
            description:
              'invalid_request, invalid_json, unauthorized, session_not_found, invalid_state, not_found, ' +
              'outcome_unknown, provider_unavailable, temporal_unavailable, timeout, internal_error, ' +
              'or the provider error_code (502)',
          },
          message: { type: 'string' },
          fields: {
            type: 'array',
            description: 'For invalid_request: each field (dot path) and the rule it breaks.',
            items: {
              type: 'object',
              required: ['field', 'rule'],
              properties: { field: { type: 'string' }, rule: { type: 'string' } },
            },
          },
          retryable: {
            type: 'boolean',
            description: 'Whether sending the same request again (same Idempotency-Key) can succeed.',
          },
        },
      },
    },
  },
  {
    $id: 'Session',
    type: 'object',
    description: 'A payment session as its workflow knows it (SessionView), plus links.',
    required: ['sessionId', 'kind', 'reference', 'phase', 'operations', 'events'],
    properties: {
      sessionId: { type: 'string', description: 'Provider session id (ps_...), also the workflow id.' },
      kind: {
        type: 'string',
        enum: [
          'card_checkout',
          'payment_form',
          'recurring_payment',
          'fps_payment',
          'fps_binding',
          'payout',
          'identity_check',
          'refund',
          'late_event',
        ],
      },
      reference: {
        type: 'string',
        description: 'The caller reference (or Idempotency-Key) it was created with.',
      },
      phase: {
        type: 'string',
        enum: [
          'starting',
          'processing',
          'awaiting_approval',
          'awaiting_payer',
          'awaiting_finalization',
          'succeeded',
          'failed',
          'canceled',
        ],
      },
      providerStatus: { type: 'string' },
      money: {
        type: 'object',
        properties: { amount: { type: 'integer', description: 'minor units' }, currency: { type: 'string' } },
      },
      operations: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            id: { type: 'string' },
            kind: { type: 'string', enum: ['payment', 'payout', 'refund', 'chargeback'] },
            status: { type: 'string' },
            amount: { type: 'integer' },
            currency: { type: 'string' },
            fee: {
              type: 'integer',
              description: "The provider's commission (fee_info), minor units, when it reports one.",
            },
            error: { type: 'string' },
          },
        },
      },
      userAction: {
        type: 'object',
        description: 'What the payer must do: 3-D Secure redirect (destination_info) or FPS QR (payment_qr).',
        additionalProperties: true,
      },
      publicToken: { type: 'string', description: 'Payment form: the widget token.' },
      recurringToken: { type: 'string' },
      reason: { type: 'string', description: 'Why the session ended other than successfully.' },
      lastSnapshot: { type: 'object', additionalProperties: true, description: 'session_info as last seen.' },
      events: { type: 'array', items: { type: 'object', additionalProperties: true } },
      links: {
        type: 'object',
        properties: {
          self: { type: 'string' },
          temporal: { type: 'string', description: 'The workflow in the Temporal UI (when configured).' },
        },
      },
    },
  },
];

export const idempotencyHeader = {
  type: 'object',
  properties: {
    'idempotency-key': {
      type: 'string',
      minLength: 4,
      maxLength: 64,
      pattern: '^[A-Za-z0-9._:-]+$',
      description:
        'Used as the `reference` when the body has none. The same key returns the same session. ' +
        'When both are given they must be equal.',
    },
  },
};

export const waitQuery = (defaultMs: number) => ({
  type: 'object',
  properties: {
    wait: {
      type: 'integer',
      minimum: 0,
      maximum: 25_000,
      default: defaultMs,
      description:
        'Early return: wait up to this many ms for the payer action (3-DS, QR), a decision point or ' +
        'the result before answering.',
    },
  },
});

export const sessionParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', description: 'Session id (ps_...)' } },
};

export const errorResponses = {
  400: {
    description: 'Invalid input: `fields` names each field and rule. Nothing was started.',
    ...ERROR_REF,
  },
  401: { description: 'Missing or wrong bearer token.', ...ERROR_REF },
  502: { description: 'The provider refused: `code` is its error_code.', ...ERROR_REF },
  503: { description: 'Provider or Temporal unreachable; retry.', ...ERROR_REF },
  504: { description: 'Outcome unknown: retry with the same Idempotency-Key.', ...ERROR_REF },
};
