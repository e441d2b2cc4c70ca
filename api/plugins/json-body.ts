/**
 * JSON bodies for the partner routes: an empty body reads as "no body" (clients often send
 * `Content-Type: application/json` on a bare POST /approve), and a syntax error never quotes the
 * input back (V8's messages do, and the input may hold a card number).
 */
import { ApiError } from '../errors';
import { rootPlugin } from './root-plugin';

/**
 * A `__proto__` key is refused: spreading a parsed body must never reach a prototype, and dropping the
 * key silently would answer a body the caller did not send (and skip the validation of its value).
 */
const PROTO_KEY = new ApiError(
  400,
  'invalid_json',
  'the request body has a "__proto__" key, which is refused',
);
const reviver = (key: string, value: unknown) => {
  if (key === '__proto__') throw PROTO_KEY;
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
        err === PROTO_KEY
          ? PROTO_KEY
          : new ApiError(400, 'invalid_json', 'the request body is not valid JSON'),
        undefined,
      );
    }
  });
});
