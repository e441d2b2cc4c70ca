/**
 * Size bounds for free-form JSON a partner sends (extraInfo, the provider's user_info and
 * participant_info objects, pass-through bodies). A session keeps what it was asked in its state and
 * the provider echoes extra_info in every snapshot, so an unbounded value would grow every history
 * event and store row that carries it. Checked with zod like every other rule (a 400 naming the field),
 * and written into the OpenAPI document as `x-max-json-bytes` / `x-max-depth`.
 */
import type { z } from 'zod';

export interface JsonBounds {
  /** UTF-8 bytes of the value written as JSON. */
  maxBytes: number;
  /** Nesting of objects and arrays (a scalar is 0, `{}` is 1). */
  maxDepth: number;
}

/** Extra data echoed by the provider: small, shallow. */
export const EXTRA_INFO_BOUNDS: JsonBounds = { maxBytes: 4_096, maxDepth: 8 };
/** The payer or payee as the provider's user_info / participant_info. */
export const PARTY_BOUNDS: JsonBounds = { maxBytes: 4_096, maxDepth: 4 };
/**
 * A refund's extra_info: smaller, because a session may take many refunds and each waits in the
 * session's state until the provider has it.
 */
export const REFUND_EXTRA_INFO_BOUNDS: JsonBounds = { maxBytes: 1_024, maxDepth: 4 };

function depthOf(value: unknown, limit: number, depth = 0): number {
  if (depth > limit || value === null || typeof value !== 'object') return depth;
  let deepest = depth + 1;
  for (const v of Object.values(value as object)) {
    deepest = Math.max(deepest, depthOf(v, limit, depth + 1));
    if (deepest > limit) break;
  }
  return deepest;
}

/** Why `value` breaks `bounds` (the rule, for a 400 naming the field), or undefined when it does not. */
export function jsonBoundsProblem(value: unknown, bounds: JsonBounds): string | undefined {
  if (value === undefined) return undefined;
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    return 'a JSON value';
  }
  const bytes = new TextEncoder().encode(text ?? '').length;
  if (bytes > bounds.maxBytes) return `at most ${bounds.maxBytes} bytes as JSON (this is ${bytes})`;
  if (depthOf(value, bounds.maxDepth) > bounds.maxDepth)
    return `nested at most ${bounds.maxDepth} levels deep`;
  return undefined;
}

/** `schema`, also refusing values larger or deeper than `bounds` (named by the field, with the rule). */
export function boundedJson<S extends z.ZodType>(schema: S, bounds: JsonBounds): S {
  return schema
    .superRefine((value, ctx) => {
      const problem = jsonBoundsProblem(value, bounds);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    })
    .meta({ 'x-max-json-bytes': bounds.maxBytes, 'x-max-depth': bounds.maxDepth }) as unknown as S;
}
