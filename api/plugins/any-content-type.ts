/**
 * For the public routes whose body the Content-Type does not decide: the provider's webhook (its
 * signature covers the raw bytes, never the header) and the payer's return page (a person is looking).
 * Fastify answers 415 to a Content-Type that is no `type/subtype` at all (`sR-`, `/`, an empty value),
 * before any parser or handler sees the request. Such a header is read as none instead, so a signed event
 * is judged by its signature and a payer sees the page, whatever their client put in that header.
 */
import type { FastifyInstance } from 'fastify';

// `type "/" subtype` before any parameters (RFC 9110 §8.3.1), as fastify checks it (lib/content-type.js).
const TOKEN = "[\\w!#$%&'*+.^`|~-]+";
const MEDIA_TYPE = new RegExp(`^\\s*${TOKEN}/${TOKEN}\\s*(;|$)`);

/** Adds, to this encapsulated scope only, a hook that drops a malformed Content-Type header. */
export function readMalformedContentTypeAsNone(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    const contentType = request.headers['content-type'];
    if (contentType !== undefined && !MEDIA_TYPE.test(contentType)) delete request.headers['content-type'];
  });
}
