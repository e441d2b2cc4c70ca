/**
 * JSON bodies for the partner routes: an empty body reads as "no body" (clients often send
 * `Content-Type: application/json` on a bare POST /approve), and a syntax error never quotes the
 * input back (V8's messages do, and the input may hold a card number).
 */
import { ApiError } from '../errors';
import { rootPlugin } from './root-plugin';

/**
 * A `__proto__` key, at any depth, is refused (as fastify's own parser does): dropping it would read a
 * body the caller did not send and skip the validation of its value (zod skips such keys too), and
 * keeping it would let a later `Object.assign` reach a prototype. The OpenAPI document says so
 * (api/plugins/openapi.ts).
 */
export const PROTO_KEY = '__proto__';
export const PROTO_KEY_RULE = 'no object in a request body may have this key';
/** A field path is shown to this many steps: longer than any field paysaga reads. */
const MAX_SHOWN_DEPTH = 16;

/**
 * Where the first `__proto__` key of a parsed body is, as a field path (`payloads.0.metadata.__proto__`);
 * JSON.parse keeps such a key as an own property. Walked without recursion, each value linked to its
 * parent's step, so that a body nested deeper than the call stack goes costs one visit per value.
 */
export function protoKeyField(body: unknown): string | undefined {
  type Step = { key: string; up?: Step };
  const pending: { value: unknown; at?: Step }[] = [{ value: body }];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const { value, at } = next;
    if (value === null || typeof value !== 'object') continue;
    if (Object.hasOwn(value, PROTO_KEY)) {
      const path: string[] = [];
      for (let step = at; step; step = step.up) path.push(step.key);
      path.reverse();
      if (path.length > MAX_SHOWN_DEPTH) path.splice(MAX_SHOWN_DEPTH, Infinity, '…');
      return [...path, PROTO_KEY].join('.');
    }
    const entries = Object.entries(value);
    for (let i = entries.length - 1; i >= 0; i--)
      pending.push({ value: entries[i]![1], at: { key: entries[i]![0], up: at } });
  }
  return undefined;
}

export const jsonBodyPlugin = rootPlugin('paysaga-json-body', async (app) => {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    // Empty means no bytes at all. Whitespace alone is no JSON text (RFC 8259 wants a value), so it is
    // refused like any other body that does not parse (schemathesis sent a lone "\n" to the codec).
    if (text.length === 0) return done(null, undefined);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return done(new ApiError(400, 'invalid_json', 'the request body is not valid JSON'), undefined);
    }
    const field = protoKeyField(parsed);
    if (field === undefined) return done(null, parsed);
    done(
      new ApiError(400, 'invalid_request', 'invalid input', false, [{ field, rule: PROTO_KEY_RULE }]),
      undefined,
    );
  });
});
