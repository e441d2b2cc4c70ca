/**
 * PostgreSQL's text and jsonb cannot hold U+0000, and a write that carries one fails every time it is
 * retried: a record that can never be written. What paysaga stores comes from callers (references,
 * customer fields, tokens, extra info) and from the provider, so every record is passed through
 * `storable` first: each U+0000 in a string or a key becomes U+FFFD (the replacement character), the
 * rest is unchanged. The record in the store then differs from the request in that character only.
 */
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
