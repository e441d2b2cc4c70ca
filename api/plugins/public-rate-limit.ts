/**
 * A per-address request limit on the public listener (issue 15: it faces the internet; the provider's
 * webhooks and payers' browsers come there). @fastify/rate-limit counts each client address in a
 * fixed window; past the limit the answer is 429 in the API's error envelope with `Retry-After`. The
 * provider retries a refused webhook, and a session polls transaction/state anyway, so a limit never
 * loses an outcome. Registered on the public instance only: /v1 has its own refusal limit
 * (plugins/auth.ts).
 */
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance } from 'fastify';
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
