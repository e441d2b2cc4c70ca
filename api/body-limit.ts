/**
 * The largest request body paysaga reads (a payer's browser may POST back a large 3-DS form; nothing else
 * needs more): fastify's limit, the webhook receiver's own parser, and the 413 the OpenAPI document
 * states, all from here.
 */
export const BODY_LIMIT_BYTES = 1024 * 1024;

/** The 413's description wherever the document states it. */
export const BODY_TOO_LARGE = 'The body is larger than 1 MiB.';
