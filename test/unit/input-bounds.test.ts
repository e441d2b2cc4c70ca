/**
 * Bounded input everywhere: every field a caller can send to any route, as the OpenAPI
 * document describes it, has a bound. A string has a maximum length, an enum, or an anchored pattern
 * without an open-ended repeat; a number a maximum; an array a maximum count; a free-form object a
 * maximum size as JSON (`x-max-json-bytes`, checked by common/json-bounds.ts). A new field without
 * one fails here, naming the route and the field's path.
 */
import { boundedJson, EXTRA_INFO_BOUNDS } from '../../common/json-bounds';
import { z } from 'zod';
import { servedOpenApi, type Schema } from '../helpers/openapi-doc';

/** Anchored, and every repeat has an upper count: the pattern alone bounds the length. */
const boundedPattern = (p: unknown) =>
  typeof p === 'string' && p.startsWith('^') && p.endsWith('$') && !/(?<!\\)[*+]|\{\d+,\}/.test(p);

/** Formats whose values have a fixed greatest length. */
const BOUNDED_FORMATS = new Set(['date-time', 'date', 'ipv4', 'ipv6', 'uuid']);

function unbounded(doc: Schema): string[] {
  const components = ((doc.components as Schema | undefined)?.schemas ?? {}) as Record<string, Schema>;
  const found: string[] = [];
  const walk = (raw: unknown, path: string, seen: Set<string>): void => {
    if (!raw || typeof raw !== 'object') return;
    let s = raw as Schema;
    if (typeof s.$ref === 'string') {
      const name = s.$ref.split('/').pop()!.replace(/#$/, '');
      if (seen.has(name) || !components[name]) return;
      seen = new Set([...seen, name]);
      s = components[name]!;
    }
    if ('x-max-json-bytes' in s) return; // the whole value is bounded as JSON
    const types = ([] as unknown[]).concat(s.type ?? []);
    if (types.includes('string') && !('maxLength' in s || 'enum' in s || 'const' in s))
      if (!boundedPattern(s.pattern) && !BOUNDED_FORMATS.has(String(s.format))) found.push(`${path}: string`);
    if (
      (types.includes('number') || types.includes('integer')) &&
      !('maximum' in s || 'exclusiveMaximum' in s)
    )
      found.push(`${path}: number`);
    if (types.includes('array') && !('maxItems' in s)) found.push(`${path}: array`);
    if (types.includes('object') && s.additionalProperties !== undefined && s.additionalProperties !== false)
      if (!('maxProperties' in s)) found.push(`${path}: object with any properties`);
    const combined = ['anyOf', 'oneOf', 'allOf'].some((k) => k in s);
    if (types.length === 0 && !combined && !('$ref' in s || 'properties' in s || 'const' in s || 'enum' in s))
      found.push(`${path}: any value`);
    for (const [k, v] of Object.entries((s.properties ?? {}) as Schema)) walk(v, `${path}.${k}`, seen);
    if (s.items) walk(s.items, `${path}[]`, seen);
    for (const k of ['anyOf', 'oneOf', 'allOf'])
      for (const [i, branch] of ((s[k] ?? []) as Schema[]).entries()) {
        // A branch without a type only adds a rule (required together, not both) to the typed schema.
        if (!('type' in branch) && !('$ref' in branch)) continue;
        walk(branch, `${path}|${k}[${i}]`, seen);
      }
  };
  for (const [route, operations] of Object.entries(doc.paths as Record<string, Schema>))
    for (const [method, op] of Object.entries(operations as Record<string, Schema>)) {
      const name = `${method.toUpperCase()} ${route}`;
      for (const p of (op.parameters ?? []) as Schema[])
        walk(p.schema, `${name} ${p.in as string} ${p.name as string}`, new Set());
      const content = ((op.requestBody as Schema | undefined)?.content ?? {}) as Record<string, Schema>;
      for (const c of Object.values(content)) walk(c.schema, `${name} body`, new Set());
    }
  return found;
}

describe('every input is bounded', () => {
  let doc: Schema;
  beforeAll(async () => {
    doc = await servedOpenApi();
  });

  it('the OpenAPI document has a bound for every field of every route', () => {
    expect(Object.keys(doc.paths as object)).toEqual(
      expect.arrayContaining(['/v1/checkouts', '/codec/decode']),
    );
    expect(unbounded(doc)).toEqual([]);
  });

  it('the walk finds what is unbounded (a check that cannot fail would prove nothing)', () => {
    const probe = {
      paths: {
        '/x': {
          post: {
            parameters: [{ in: 'query', name: 'q', schema: { type: 'string', pattern: '^a+$' } }],
            requestBody: {
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    properties: {
                      n: { type: 'integer' },
                      list: { type: 'array', items: { type: 'string', maxLength: 3 } },
                      free: {},
                      ok: { type: 'string', pattern: '^[a-z]{1,8}$' },
                    },
                  },
                },
              },
            },
          },
        },
      },
    };
    expect(unbounded(probe)).toEqual([
      'POST /x query q: string',
      'POST /x body.n: number',
      'POST /x body.list: array',
      'POST /x body.free: any value',
    ]);
  });

  it('a free-form value larger or deeper than its bound is refused with the rule', () => {
    const extra = boundedJson(z.unknown(), EXTRA_INFO_BOUNDS);
    expect(extra.safeParse({ note: 'x'.repeat(100) }).success).toBe(true);
    const big = extra.safeParse({ note: 'x'.repeat(5_000) });
    expect(big.error?.issues[0]?.message).toBe('at most 4096 bytes as JSON (this is 5011)');
    let deep: unknown = 1;
    for (let i = 0; i < 12; i++) deep = [deep];
    expect(extra.safeParse(deep).error?.issues[0]?.message).toBe('nested at most 8 levels deep');
  });
});
