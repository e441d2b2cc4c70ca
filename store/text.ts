/**
 * PostgreSQL's text and jsonb cannot hold U+0000, and a write that carries one fails every time it is
 * retried: a record that can never be written. What paysaga stores comes from callers (references,
 * customer fields, tokens, extra info) and from the provider, so every record is passed through
 * `storable` first: each U+0000 in a string or a key becomes U+FFFD (the replacement character), the
 * rest is unchanged. The record in the store then differs from the request in that character only.
 */
import {
  OperationNodeTransformer,
  type KyselyPlugin,
  type PrimitiveValueListNode,
  type ValueNode,
} from 'kysely';

// eslint-disable-next-line no-control-regex -- U+0000 is exactly what this replaces
const NUL = /\u0000/g;
const REPLACEMENT = '\uFFFD';

export function storable<T>(value: T): T {
  return clean(value) as T;
}

/** The value itself when it holds no U+0000 (no copy on the write path), else a cleaned copy. */
function clean(value: unknown): unknown {
  if (typeof value === 'string') return value.includes('\u0000') ? value.replace(NUL, REPLACEMENT) : value;
  if (Array.isArray(value)) {
    const items = value.map(clean);
    return items.some((v, i) => v !== value[i]) ? items : value;
  }
  if (value === null || typeof value !== 'object' || value instanceof Date) return value;
  let out: Record<string, unknown> | undefined;
  for (const [k, v] of Object.entries(value)) {
    const key = k.includes('\u0000') ? k.replace(NUL, REPLACEMENT) : k;
    const cleaned = clean(v);
    if (!out && (key !== k || cleaned !== v)) out = Object.fromEntries(Object.entries(value));
    if (out) {
      if (key !== k) delete out[k];
      out[key] = cleaned;
    }
  }
  return out ?? value;
}

/**
 * Every parameter of every query passes `storable`: a search for a customer id holding U+0000 (a caller's
 * query string) would otherwise fail in PostgreSQL with a 500, and finds what the same value was stored as.
 */
class StorableParameters extends OperationNodeTransformer {
  protected override transformValue(node: ValueNode): ValueNode {
    const value = storable(node.value);
    return value === node.value ? node : Object.freeze({ ...node, value });
  }

  protected override transformPrimitiveValueList(node: PrimitiveValueListNode): PrimitiveValueListNode {
    const values = storable(node.values);
    return values === node.values ? node : Object.freeze({ ...node, values });
  }
}

export function storableParametersPlugin(): KyselyPlugin {
  const transformer = new StorableParameters();
  return {
    transformQuery: ({ node }) => transformer.transformNode(node),
    transformResult: async ({ result }) => result,
  };
}
