import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { issuePath, issueRule } from '../../provider/schemas';
import { ApiError, errorEnvelope } from '../errors';

/** Shared by the unsigned /sandbox routes: body parsing and the same error envelope as /api/v1. */

/** JSON or form body; empty form fields count as absent. */
export function bodyOf<T extends z.ZodType>(req: FastifyRequest, schema: T): z.output<T> {
  return fieldsOf(req.body, schema);
}

/** A body or a query string, checked like /api/v1 requests (description `field.rule`). */
export function fieldsOf<T extends z.ZodType>(value: unknown, schema: T): z.output<T> {
  const raw = value && typeof value === 'object' ? { ...(value as Record<string, unknown>) } : {};
  for (const [k, v] of Object.entries(raw)) if (v === '') delete raw[k];
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const path = issuePath(issue);
  const rule = issueRule(issue, raw);
  throw new ApiError('invalid_request', path ? `${path}.${rule}` : rule);
}

export function isFormPost(req: FastifyRequest): boolean {
  return (req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded');
}

export function useEnvelopeErrors(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, req, reply) => {
    if (err instanceof ApiError)
      return reply.code(err.httpStatus).send(errorEnvelope(err.code, err.description));
    if (err.statusCode !== undefined && err.statusCode < 500) {
      return reply.code(err.statusCode).send(errorEnvelope('invalid_request', 'body.invalid'));
    }
    req.log.error({ err: { message: err.message, stack: err.stack } }, 'sandbox route failed');
    return reply.code(500).send(errorEnvelope('internal_error', 'internal_error'));
  });
}
