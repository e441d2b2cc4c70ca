import type { z } from 'zod';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { describeIssue } from '../../provider/schemas/validation';
import { errorEnvelope } from '../errors';
import { faultRulesBodySchema, FaultRulesError, type FaultInjector } from '../faults';
import type { WebhookDispatcher } from '../webhooks';

/*
 * Fault injection as fastify hooks, plus the sandbox's control endpoints for it:
 *   GET/POST/DELETE /sandbox/faults   show / replace / clear the rules
 *   GET /sandbox/webhooks[?session_id=]  every webhook delivery attempt
 *
 * Register before the /api/v1 routes. The plugin skips fastify's encapsulation (like fastify-plugin
 * does) so its hooks see the routes registered next to it; the hooks act on /api/v1/* only.
 */

export interface FaultsPluginOptions {
  faults: FaultInjector;
  /** Source of GET /sandbox/webhooks; when absent, the dispatcher built with `faults` is used. */
  dispatcher?: WebhookDispatcher;
}

/** Requests that are processed and then lose their connection instead of an answer. */
const toDrop = new WeakSet<FastifyRequest>();

const faultsPlugin: FastifyPluginAsync<FaultsPluginOptions> = async (app, opts) => {
  const { faults } = opts;

  app.addHook('onRequest', async (request, reply) => {
    if (!isApiRequest(request)) return;
    const decision = faults.decideRequest(request.url);
    if (decision.latencyMs > 0) await sleep(decision.latencyMs);
    if (decision.errorStatus !== undefined) {
      // What a gateway in front of the provider would answer: not the provider's JSON envelope, and the
      // request never reaches a handler, so nothing changes.
      await reply
        .code(decision.errorStatus)
        .header('content-type', 'text/plain; charset=utf-8')
        .send(`${decision.errorStatus} (sandbox fault injection: error_5xx)`);
      return reply;
    }
    if (decision.refusal) {
      // The provider's own refusal (its JSON envelope), made up before any check: nothing changes.
      const { errorCode, description, httpStatus } = decision.refusal;
      await reply.code(httpStatus).send(errorEnvelope(errorCode, description));
      return reply;
    }
    if (decision.dropAfterCommit) toDrop.add(request);
    return undefined;
  });

  // onSend runs after the handler has committed its changes and built the answer; closing the socket here
  // means the partner sent the request, the state changed, and no answer ever arrives.
  app.addHook('onSend', async (request, reply, payload) => {
    if (!toDrop.has(request)) return payload;
    toDrop.delete(request);
    request.log.info({ url: request.url }, 'fault injection: dropping connection after commit');
    reply.hijack();
    request.raw.socket?.destroy();
    return payload;
  });

  app.get('/sandbox/faults', async () => ({ rules: faults.list() }));

  const refuse = (reply: FastifyReply, issues: readonly z.core.$ZodIssue[], body: unknown) =>
    reply.code(400).send({
      status: 'error',
      error: { error_code: 'invalid_request', error_description: describeRuleIssue(issues[0]!, body) },
      issues: issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message })),
    });

  app.post('/sandbox/faults', async (request, reply) => {
    const body = jsonBody(request.body);
    const parsed = faultRulesBodySchema.safeParse(body);
    if (!parsed.success) return refuse(reply, parsed.error.issues, body);
    faults.setRules(parsed.data.rules);
    return { rules: faults.list() };
  });

  // Appends instead of replacing: rules already held keep their counters and `forMs` windows.
  app.post('/sandbox/faults/add', async (request, reply) => {
    const body = jsonBody(request.body);
    const parsed = faultRulesBodySchema.safeParse(body);
    if (!parsed.success) return refuse(reply, parsed.error.issues, body);
    try {
      faults.addRules(parsed.data.rules);
    } catch (err) {
      if (err instanceof FaultRulesError)
        return refuse(
          reply,
          err.zodError.issues.map((i) => ({ ...i, path: ['rules', ...i.path] })),
          body,
        );
      throw err;
    }
    return { rules: faults.list() };
  });

  app.delete('/sandbox/faults', async () => {
    faults.clear();
    return { rules: faults.list() };
  });

  app.get(
    '/sandbox/webhooks',
    async (request: FastifyRequest<{ Querystring: { session_id?: string } }>, reply: FastifyReply) => {
      const log = opts.dispatcher
        ? (f: { sessionId?: string }) => opts.dispatcher!.deliveries(f)
        : faults.deliveryLog();
      if (!log)
        return reply.code(404).send({
          status: 'error',
          error: { error_code: 'not_found', error_description: 'no webhook dispatcher' },
        });
      const sessionId = request.query.session_id;
      return { deliveries: log(sessionId ? { sessionId } : {}) };
    },
  );
};

// Same effect as wrapping in fastify-plugin (not a direct dependency): the hooks are added to the parent context.
(faultsPlugin as unknown as Record<symbol, unknown>)[Symbol.for('skip-override')] = true;
(faultsPlugin as unknown as Record<symbol, unknown>)[Symbol.for('fastify.display-name')] = 'sandbox-faults';

export default faultsPlugin;

/** `field.rule` as the provider names fields; an unknown key is named itself rather than its parent object. */
function describeRuleIssue(issue: z.core.$ZodIssue, body: unknown): string {
  if (issue.code === 'unrecognized_keys' && issue.keys[0] !== undefined) {
    return [...issue.path.map(String), issue.keys[0], 'unknown_field'].join('.');
  }
  return describeIssue(issue, body);
}

function isApiRequest(request: FastifyRequest): boolean {
  return (
    request.url === '/api/v1' || request.url.startsWith('/api/v1/') || request.url.startsWith('/api/v1?')
  );
}

/** The server may parse JSON into a Buffer or string (to keep raw bytes for signatures); accept all three. */
function jsonBody(body: unknown): unknown {
  try {
    if (Buffer.isBuffer(body)) return JSON.parse(body.toString('utf8'));
    if (typeof body === 'string') return JSON.parse(body);
  } catch {
    return undefined;
  }
  return body;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
