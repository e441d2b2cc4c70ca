/**
 * JSON bodies for the partner routes: an empty body reads as "no body" (clients often send
 * `Content-Type: application/json` on a bare POST /approve), and a syntax error never quotes the
 * input back (V8's messages do, and the input may hold a card number).
 */
import { ApiError } from '../errors';
import { rootPlugin } from './root-plugin';

// `__proto__` keys are dropped: spreading a parsed body must never reach a prototype.
const reviver = (key: string, value: unknown) => (key === '__proto__' ? undefined : value);

export const jsonBodyPlugin = rootPlugin('paysaga-json-body', async (app) => {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    // Empty means no bytes at all. Whitespace alone is no JSON text (RFC 8259 wants a value), so it is
    // refused like any other body that does not parse (schemathesis sent a lone "\n" to the codec).
    if (text.length === 0) return done(null, undefined);
    try {
      done(null, JSON.parse(text, reviver));
    } catch {
      done(new ApiError(400, 'invalid_json', 'the request body is not valid JSON'), undefined);
    }
  });
});
