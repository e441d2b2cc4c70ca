/**
 * A per-address request limit on the public listener (it faces the internet; the provider's
 * webhooks and payers' browsers come there). @fastify/rate-limit counts each client address in a
 * fixed window; past the limit the answer is 429 in the API's error envelope with `Retry-After`. The
 * provider retries a refused webhook, and a session polls transaction/state anyway, so a limit never
 * loses an outcome. A webhook the provider signed is not counted (`providerSignedExempt`): the provider
 * sends a partner's every webhook from a few addresses, so a per-address limit would throttle a busy
 * partner's own provider (`paysaga dev` creating 15 checkouts a second got 429 for a third of its
 * webhooks, each then 5 s late). Registered on the public instance only: /v1 has its own refusal limit
 * (plugins/auth.ts).
 */
import rateLimit, { type RateLimitOptions } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { WebhookVerification } from '../../provider';
import { ApiError } from '../errors';

export interface PublicRateLimit {
  /** Requests per address per window. */
  max: number;
  windowMs: number;
}

/** 1200 a minute from one address: far above one provider's webhook rate per sender, far below a flood. */
export const DEFAULT_PUBLIC_RATE_LIMIT: PublicRateLimit = { max: 1_200, windowMs: 60_000 };

/** On `app` itself (the plugin is not encapsulated): every route registered after it is limited. */
export function registerPublicRateLimit(app: FastifyInstance, limit: PublicRateLimit): void {
  void app.register(rateLimit, {
    max: limit.max,
    timeWindow: limit.windowMs,
    keyGenerator: (request) => request.ip,
    // Bounded memory however many addresses come (an LRU of this many).
    cache: 10_000,
    errorResponseBuilder: (_request, context) =>
      new ApiError(429, 'rate_limited', `more than ${context.max} requests from this address: wait`, true),
  });
}

/**
 * The webhook route's own count: taken once the body is read (the signature covers the raw bytes), and
 * only of requests the provider did not sign; a signed one is verified again by the route's handler.
 */
export function providerSignedExempt(
  verify: (raw: Buffer, signature: string | undefined) => WebhookVerification,
): RateLimitOptions {
  return {
    hook: 'preHandler',
    allowList: (request: FastifyRequest) => {
      const signature = request.headers['x-signature'];
      return (
        Buffer.isBuffer(request.body) &&
        verify(request.body, Array.isArray(signature) ? signature[0] : signature).ok
      );
    },
  };
}
