/**
 * Codec server for the Temporal UI and CLI (docs/decisions/002-card-data-never-enters-temporal.md): they post
 * encrypted payloads and show what comes back, so authorized staff can read sessions that are encrypted at
 * rest. Protocol of Temporal's codec servers: POST /codec/decode and /codec/encode with
 * `{ payloads: [{ metadata: { <key>: <base64> }, data: <base64> }] }` (protobuf JSON: empty fields are
 * left out, so no payloads at all arrive as `{}`), answered in the same shape. Served on the internal
 * listener only (api/app.ts), and only when the API has the worker's codec; open without codec tokens
 * only while that listener is on loopback (api/listeners.ts). Card data never enters Temporal, so
 * nothing decoded here can hold it.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Payload, PayloadCodec } from '@temporalio/common';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { ApiError } from '../errors';
import { objectBody, parse } from '../http';
import { docSchema, errorResponses } from '../schemas';
import { EncryptionCodec } from '../../platform/codec';
import { BODY_LIMIT_BYTES } from '../body-limit';

export interface CodecRouteOptions {
  codec: PayloadCodec;
  tokens: string[];
  corsOrigins: string[];
}

// Bounded as a whole by the body limit (1 MiB, a 413 past it), as the document says.
const base64 = z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, 'base64');
const payloadsBody = z
  .object({
    payloads: z
      .array(z.object({ metadata: z.record(z.string(), base64).optional(), data: base64.optional() }))
      .default([]),
  })
  .meta({ 'x-max-json-bytes': BODY_LIMIT_BYTES });
type JsonPayloads = z.infer<typeof payloadsBody>['payloads'];

const fromJson = (ps: JsonPayloads): Payload[] =>
  ps.map((p) => ({
    metadata: Object.fromEntries(
      Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')]),
    ),
    data: Buffer.from(p.data ?? '', 'base64'),
  }));

const toJson = (ps: Payload[]) =>
  ps.map((p) => ({
    metadata: Object.fromEntries(
      Object.entries(p.metadata ?? {}).map(([k, v]) => [
        k,
        Buffer.from(v ?? new Uint8Array()).toString('base64'),
      ]),
    ),
    data: Buffer.from(p.data ?? new Uint8Array()).toString('base64'),
  }));

const digest = (s: string) => createHash('sha256').update(s).digest();

export const codecRoutes: FastifyPluginAsync<CodecRouteOptions> = async (app, opts) => {
  const accepted = opts.tokens.filter(Boolean).map(digest);

  // The UI calls from the browser: answer CORS for the configured origins only.
  const cors = (request: FastifyRequest, reply: FastifyReply) => {
    const origin = request.headers.origin;
    if (origin && opts.corsOrigins.includes(origin)) {
      reply.header('access-control-allow-origin', origin);
      reply.header('access-control-allow-credentials', 'true');
      reply.header('access-control-allow-headers', 'content-type, x-namespace, authorization');
      reply.header('access-control-allow-methods', 'POST, OPTIONS');
      reply.header('vary', 'origin');
    }
  };
  app.addHook('onRequest', async (request, reply) => {
    cors(request, reply);
    if (request.method === 'OPTIONS' || accepted.length === 0) return;
    const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
    const given = match ? digest(match[1]!) : undefined;
    if (!given || !accepted.some((t) => timingSafeEqual(t, given))) {
      reply.header('www-authenticate', 'Bearer realm="paysaga-codec"');
      throw new ApiError(401, 'unauthorized', 'the codec needs a codec token');
    }
  });

  // The UI shows every history, also payloads written before the keys were set: they pass here.
  const display = opts.codec instanceof EncryptionCodec ? opts.codec.withPlain('accept') : opts.codec;
  for (const op of ['decode', 'encode'] as const) {
    app.options(
      `/codec/${op}`,
      {
        schema: {
          tags: ['operations'],
          summary: `CORS preflight of ${op}`,
          description:
            'Answers the CORS headers to the origins of PAYSAGA_CODEC_CORS_ORIGINS (none to others).',
          response: { 204: { description: 'No content.', type: 'null' } },
        },
      },
      async (_request, reply) => reply.code(204).send(),
    );
    app.post(
      `/codec/${op}`,
      {
        schema: {
          tags: ['operations'],
          summary: `Temporal UI codec: ${op} payloads`,
          description:
            'Set as the codec endpoint of the Temporal UI and CLI (`<internal URL>/codec`). Needs ' +
            '`Authorization: Bearer <codec token>` when PAYSAGA_CODEC_TOKENS is set.',
          body: docSchema(payloadsBody, { name: 'CodecPayloads' }),
          response: {
            200: { description: `The payloads, ${op}d.`, ...docSchema(payloadsBody, { io: 'output' }) },
            400: errorResponses[400],
            401: errorResponses[401],
            500: errorResponses[500],
          },
        },
      },
      async (request) => {
        const { payloads } = parse(payloadsBody, objectBody(request.body));
        const out = await display[op](fromJson(payloads));
        return { payloads: toJson(out) };
      },
    );
  }
};
