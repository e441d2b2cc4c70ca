import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import {
  endpoints,
  IDEMPOTENCY_HEADER,
  type EndpointDef,
  type EndpointName,
} from '../../provider/schemas/endpoints';
import { innermostIssue, issuePath, issueRule } from '../../provider/schemas';
import { authenticate, submerchantOf } from '../auth';
import type { FlowContext } from '../engine/context';
import { ApiError, errorEnvelope, specField } from '../errors';
import { requestFingerprint } from '../idempotency';
import { apiHandlers } from './api-handlers';

/*
 * /api/v1: every endpoint of provider/schemas/endpoints.ts. Order of checks, each refusing without side effects:
 * signature over the raw bytes -> content type -> JSON -> idempotency header -> request schema ->
 * idempotency record -> the endpoint's own checks. Only then does anything change.
 */

export interface ApiPluginOptions {
  ctx: FlowContext;
}

const idempotencyKey = z.string().min(4).max(64);

interface LoggedCall {
  endpoint: string;
  projectId?: string;
  sessionId?: string;
  replayed?: boolean;
}

/** The session an answer concerns (session_info.id), if any. */
function sessionOf(body: unknown): string | undefined {
  const id = (body as { session_info?: { id?: unknown } } | undefined)?.session_info?.id;
  return typeof id === 'string' ? id : undefined;
}

function send(reply: FastifyReply, err: ApiError): FastifyReply {
  return reply.code(err.httpStatus).send(errorEnvelope(err.code, err.description));
}

function parseJson(req: FastifyRequest, body: Buffer): unknown {
  const mediaType = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (body.length === 0 && req.method === 'GET') return {}; // sbp/banks may come without its empty object
  if (mediaType !== 'application/json')
    throw new ApiError('unsupported_media_type', 'Content-Type.invalid_value');
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    throw new ApiError('invalid_request', 'body.malformed_json');
  }
  if (!json || typeof json !== 'object' || Array.isArray(json))
    throw new ApiError('invalid_request', 'body.invalid_type');
  return json;
}

function keyOf(req: FastifyRequest, def: EndpointDef): string | undefined {
  const raw = req.headers[IDEMPOTENCY_HEADER];
  if (raw === undefined) return undefined;
  if (!def.idempotent)
    throw new ApiError('idempotency_key_not_supported', `X-PARTNER-IDEMPOTENCY-KEY.not_supported`);
  const parsed = idempotencyKey.safeParse(raw);
  if (!parsed.success)
    throw new ApiError(
      'invalid_request',
      `X-PARTNER-IDEMPOTENCY-KEY.${issueRule(parsed.error.issues[0]!, raw)}`,
    );
  return parsed.data;
}

function validate(def: EndpointDef, json: unknown): unknown {
  const parsed = def.request.safeParse(json);
  if (parsed.success) return parsed.data;
  const issue = innermostIssue(parsed.error.issues[0]!);
  const path = issuePath(issue);
  const rule = issueRule(issue, json);
  throw new ApiError('invalid_request', path ? `${specField(path)}.${rule}` : rule);
}

export const apiRoutes: FastifyPluginAsync<ApiPluginOptions> = async (app, { ctx }) => {
  // Raw bytes for every content type: the signature is checked over exactly what arrived, before parsing.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: ctx.config.bodyLimit }, (_req, body, done) =>
    done(null, body),
  );

  app.setNotFoundHandler((req, reply) => {
    void send(reply, new ApiError('endpoint_not_found', `${req.method} ${req.url.split('?')[0]}`));
  });

  app.setErrorHandler((err: FastifyError, req, reply) => {
    if (err instanceof ApiError) return send(reply, err);
    if (err.statusCode === 413) return send(reply, new ApiError('invalid_request', 'body.too_large'));
    if (err.statusCode === 415)
      return send(reply, new ApiError('unsupported_media_type', 'Content-Type.invalid_value'));
    if (err.statusCode !== undefined && err.statusCode < 500)
      return send(reply, new ApiError('invalid_request', 'body.invalid'));
    req.log.error({ err: { message: err.message, stack: err.stack } }, 'sandbox handler failed');
    return send(reply, new ApiError('internal_error', 'internal_error'));
  });

  // The request log (GET /sandbox/requests): one entry per call, written once it is answered.
  const loggedCalls = new WeakMap<FastifyRequest, LoggedCall>();
  app.addHook('onResponse', async (req, reply) => {
    const call = loggedCalls.get(req);
    const endpoint = call?.endpoint ?? req.url.split('?')[0]!;
    ctx.state.requests.add({
      endpoint,
      http_status: reply.statusCode,
      ...(call?.projectId ? { project_id: call.projectId } : {}),
      ...(call?.sessionId ? { session_id: call.sessionId } : {}),
      ...(call?.replayed ? { replayed: true } : {}),
    });
  });

  for (const [name, def] of Object.entries(endpoints) as [EndpointName, EndpointDef][]) {
    const handler = apiHandlers[name] as (
      c: FlowContext,
      caller: { projectId: string; submerchantId?: string },
      r: unknown,
    ) => Record<string, unknown>;
    app.route({
      method: def.method,
      url: `/${def.path}`,
      handler: async (req, reply) => {
        const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
        const logged: LoggedCall = { endpoint: def.path };
        loggedCalls.set(req, logged);
        const project = authenticate(req.headers, raw, ctx.config.projects);
        logged.projectId = project.id;
        const json = parseJson(req, raw);
        const named = (json as { session_id?: unknown }).session_id;
        if (typeof named === 'string') logged.sessionId = named;
        const key = keyOf(req, def);
        const body = validate(def, json);
        const submerchantId = submerchantOf(req.headers);
        const caller = { projectId: project.id, ...(submerchantId ? { submerchantId } : {}) };

        if (key !== undefined) {
          const seen = ctx.state.idempotency.begin(project.id, key, requestFingerprint(def.path, json));
          if (seen.kind === 'mismatch')
            throw new ApiError(
              'idempotency_key_params_mismatch',
              'X-PARTNER-IDEMPOTENCY-KEY.params_mismatch',
            );
          if (seen.kind === 'in_flight')
            throw new ApiError('idempotency_key_already_exists', 'X-PARTNER-IDEMPOTENCY-KEY.in_progress');
          if (seen.kind === 'replay') {
            logged.replayed = true;
            logged.sessionId ??= sessionOf(seen.body);
            return reply.code(seen.httpStatus).send(seen.body);
          }
        }
        try {
          if (def.mutating && ctx.config.processingMs > 0) await sleep(ctx.config.processingMs);
          const result = { status: 'ok', ...handler(ctx, caller, body) };
          logged.sessionId ??= sessionOf(result);
          if (key !== undefined) ctx.state.idempotency.complete(project.id, key, 200, result);
          return reply.code(200).send(result);
        } catch (err) {
          if (key !== undefined) ctx.state.idempotency.abandon(project.id, key);
          throw err;
        }
      },
    });
  }
};
