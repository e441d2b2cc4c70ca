/**
 * The provider's webhooks. The signature covers the raw bytes, so this scope reads every body as a
 * Buffer and handleProviderWebhook verifies before anything parses it. The answer is exactly the
 * handler's status: 200 only once the event is safely in Temporal; 401 for a bad signature (nothing
 * signaled); 400 for a signed body that is not well-formed text or not an event (nothing signaled);
 * 503 when no workflow exists yet, so the provider delivers it again. Not bearer-protected:
 * the signature is the authentication. The body is never logged.
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { handleProviderWebhook } from '../../client/webhook-handler';
import { storedStates } from '../../store/sessions';
import type { ApiDeps } from '../deps';
import type { ApiMetrics } from '../plugins/metrics';
import { readMalformedContentTypeAsNone } from '../plugins/any-content-type';
import { providerSignedExempt } from '../plugins/public-rate-limit';
import { docSchema, ERROR_REF } from '../schemas';
import { BODY_LIMIT_BYTES, BODY_TOO_LARGE } from '../body-limit';

const delivered = z.object({
  outcome: z.string().describe('What became of the event (signaled, duplicate, ...)'),
  sessionId: z.string().optional(),
});

const CODE_OF_STATUS: Record<number, string> = {
  400: 'invalid_webhook',
  401: 'unauthorized',
  503: 'unknown_session',
};

export const webhookRoutes: FastifyPluginAsync<ApiDeps & { metrics: ApiMetrics }> = async (app, deps) => {
  // Encapsulated: only this scope loses the JSON parser. Any body, under any Content-Type or none, goes
  // to the signature check.
  readMalformedContentTypeAsNone(app);
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: BODY_LIMIT_BYTES }, (_request, body, done) =>
    done(null, body),
  );

  app.post(
    '/webhooks/provider',
    {
      // The public listener's per-address limit (plugins/public-rate-limit.ts) counts here only what the
      // provider did not sign: the provider sends every webhook from a few addresses, and a busy partner's
      // rate is theirs, not a flood. Checked once the body is read, since the signature covers it.
      config: { rateLimit: providerSignedExempt(deps.verifyWebhook) },
      schema: {
        tags: ['webhooks'],
        summary: 'Provider webhook receiver',
        description:
          'Signed by the provider (X-Signature over the raw body, RSA SHA-256). 200: the event is ' +
          'with Temporal; 401: bad signature, nothing signaled; 503: no workflow for the session yet, ' +
          'deliver again.',
        headers: docSchema(
          z.object({ 'x-signature': z.string().max(2_048).describe('Base64 RSA SHA-256 signature') }),
        ),
        response: {
          200: { description: 'The event is with Temporal.', ...docSchema(delivered, { io: 'output' }) },
          400: { description: 'Not a provider event.', ...ERROR_REF },
          401: { description: 'Missing or bad signature: nothing signaled.', ...ERROR_REF },
          413: { description: BODY_TOO_LARGE, ...ERROR_REF },
          429: {
            description:
              'Too many requests without a valid signature from this address (PAYSAGA_PUBLIC_RATE_LIMIT); ' +
              'a webhook the provider signed is never refused for its rate.',
            ...ERROR_REF,
          },
          500: { description: 'A fault of paysaga itself.', ...ERROR_REF },
          503: {
            description: 'No workflow for the session yet, or Temporal unreachable: deliver again.',
            ...ERROR_REF,
          },
        },
      },
    },
    async (request, reply) => {
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const signature = request.headers['x-signature'];
      let handled;
      try {
        handled = await handleProviderWebhook(raw, Array.isArray(signature) ? signature[0] : signature, {
          verify: deps.verifyWebhook,
          temporal: deps.temporal,
          taskQueue: deps.taskQueue,
          stored: storedStates(deps.store),
        });
      } catch (err) {
        // Temporal unreachable: not stored, so not acknowledged (the error handler answers 5xx).
        deps.metrics.webhooks.inc({ outcome: 'error' });
        throw err;
      }
      deps.metrics.webhooks.inc({ outcome: handled.outcome });
      // A refusal is logged with its rule (never the body); a signed body refused (400) is the provider
      // sending what paysaga cannot read as it did, or someone holding its key: worth a warning.
      request.log[handled.status === 400 ? 'warn' : 'info'](
        {
          sessionId: handled.sessionId,
          outcome: handled.outcome,
          status: handled.status,
          ...(handled.reason ? { reason: handled.reason } : {}),
          ...(handled.status !== 200 && handled.detail ? { detail: handled.detail } : {}),
        },
        'provider webhook',
      );
      if (handled.status === 200)
        return reply.code(200).send({ outcome: handled.outcome, sessionId: handled.sessionId });
      return reply.code(handled.status).send({
        error: {
          code: CODE_OF_STATUS[handled.status] ?? 'invalid_webhook',
          message: handled.detail ?? handled.outcome,
          retryable: handled.status === 503,
        },
      });
    },
  );
};
