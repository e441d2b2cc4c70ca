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
 * keeping it would let a later `Object.assign` reach a prototype. The OpenAPI document says so for every
 * object of a request body (api/plugins/openapi.ts).
 */
export const PROTO_KEY = '__proto__';
export const PROTO_KEY_RULE = 'no object in a request body may have this key';
class ProtoKeyFound extends Error {}
const reviver = (key: string, value: unknown) => {
  if (key === PROTO_KEY) throw new ProtoKeyFound();
  return value;
};

export const jsonBodyPlugin = rootPlugin('paysaga-json-body', async (app) => {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    // Empty means no bytes at all. Whitespace alone is no JSON text (RFC 8259 wants a value), so it is
    // refused like any other body that does not parse (schemathesis sent a lone "\n" to the codec).
    if (text.length === 0) return done(null, undefined);
    try {
      done(null, JSON.parse(text, reviver));
    } catch (err) {
      done(
        err instanceof ProtoKeyFound
          ? new ApiError(400, 'invalid_request', 'invalid input', false, [
              { field: PROTO_KEY, rule: PROTO_KEY_RULE },
            ])
          : new ApiError(400, 'invalid_json', 'the request body is not valid JSON'),
        undefined,
      );
    }
  });
});
