/**
 * The worker's outbound-event settings from the environment (docs/configuration.md):
 *
 *   PAYSAGA_EVENT_ENDPOINTS            endpoints for deployments without an API call: a JSON array of
 *                                      {"url", "secret" (or ["new", "old"] during a rotation), "events"?,
 *                                      "description"?, "id"?}, or `@<path>` of a file holding it.
 *                                      Set (even to `[]`): the configured endpoints are replaced by these
 *                                      at start; unset: left as they are. Secrets stay in the worker.
 *   PAYSAGA_EVENT_RETRY_FOR_MS         how long a delivery is retried before it is marked failed (3 days)
 *   PAYSAGA_EVENT_RETRY_INITIAL_MS     first pause after a failed attempt (10 s), doubling...
 *   PAYSAGA_EVENT_RETRY_MAX_MS         ...up to this (1 h)
 *   PAYSAGA_EVENT_TIMEOUT_MS           per attempt (10 s)
 *   PAYSAGA_EVENT_DELIVERY_CONCURRENCY deliveries in flight at once in this process (50)
 *   PAYSAGA_EVENT_POLL_MS              how often the store is asked for due deliveries (500 ms; an event
 *                                      stored by this process is sent at once)
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { z } from 'zod';
import { EVENT_TYPES, type EventType } from '../common/events';
import { DEFAULT_EVENT_DELIVERY, type EventDeliveryPolicy } from '../common/event-delivery';

/** An endpoint of PAYSAGA_EVENT_ENDPOINTS, with the secrets that sign for it (the first is current). */
export interface ConfiguredEndpoint {
  id: string;
  url: string;
  events: EventType[] | null;
  description?: string;
  secrets: string[];
}

export interface EventWorkerSettings {
  policy: EventDeliveryPolicy;
  /** Undefined: PAYSAGA_EVENT_ENDPOINTS is not set (the configured endpoints are left alone). */
  configured?: ConfiguredEndpoint[];
  /** Deliveries in flight at once in this process. */
  deliveryConcurrency: number;
  /** How often the store is asked for due deliveries. */
  pollMs: number;
}

const DEFAULT_DELIVERY_CONCURRENCY = 50;
const DEFAULT_POLL_MS = 500;

const configuredEntry = z.object({
  url: z.url({ protocol: /^https?$/, error: 'an http:// or https:// URL' }),
  secret: z.union([z.string().min(16), z.array(z.string().min(16)).min(1)], {
    error: 'a secret of at least 16 characters, or a list of them (the first is current)',
  }),
  events: z
    .array(z.enum(EVENT_TYPES, { error: 'an event type' }))
    .min(1)
    .optional(),
  description: z.string().max(500).optional(),
  id: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,40}$/, 'letters, digits, _ and -, at most 40')
    .optional(),
});

/**
 * PAYSAGA_EVENT_ENDPOINTS as endpoints. Ids are `we_cfg_<id>`, or `we_cfg_<12 hex of the url's
 * SHA-256>` without one. Errors name the entry and field, never a secret.
 */
export function parseConfiguredEndpoints(
  value: string,
  variable = 'PAYSAGA_EVENT_ENDPOINTS',
): ConfiguredEndpoint[] {
  let text = value.trim();
  if (text.startsWith('@')) {
    const file = text.slice(1);
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (err) {
      throw new Error(`${variable}: cannot read ${file}: ${(err as Error).message}`);
    }
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(
      `${variable} must be a JSON array of {"url", "secret", "events"?, "description"?, "id"?} or @<file>`,
    );
  }
  if (!Array.isArray(json)) throw new Error(`${variable} must be a JSON array`);
  const out = json.map((entry, i): ConfiguredEndpoint => {
    const r = configuredEntry.safeParse(entry);
    if (!r.success) {
      const issue = r.error.issues[0]!;
      throw new Error(`${variable}[${i}].${issue.path.map(String).join('.') || '(entry)'}: ${issue.message}`);
    }
    const e = r.data;
    const suffix = e.id ?? createHash('sha256').update(e.url).digest('hex').slice(0, 12);
    return {
      id: `we_cfg_${suffix}`,
      url: e.url,
      events: e.events ?? null,
      ...(e.description !== undefined ? { description: e.description } : {}),
      secrets: typeof e.secret === 'string' ? [e.secret] : e.secret,
    };
  });
  const ids = out.map((e) => e.id);
  const twice = ids.find((id, i) => ids.indexOf(id) !== i);
  if (twice)
    throw new Error(
      `${variable}: two entries have the id ${twice} (give each an "id", or use different urls)`,
    );
  return out;
}

function positiveInt(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n <= 0)
    throw new Error(`${name} must be a positive whole number, got ${raw}`);
  return n;
}

/** The worker's event settings. */
export function eventSettingsFromEnv(env: NodeJS.ProcessEnv): EventWorkerSettings {
  const d = DEFAULT_EVENT_DELIVERY;
  const policy: EventDeliveryPolicy = {
    ...d,
    retryForMs: positiveInt(env, 'PAYSAGA_EVENT_RETRY_FOR_MS') ?? d.retryForMs,
    initialRetryMs: positiveInt(env, 'PAYSAGA_EVENT_RETRY_INITIAL_MS') ?? d.initialRetryMs,
    maxRetryMs: positiveInt(env, 'PAYSAGA_EVENT_RETRY_MAX_MS') ?? d.maxRetryMs,
    timeoutMs: positiveInt(env, 'PAYSAGA_EVENT_TIMEOUT_MS') ?? d.timeoutMs,
  };
  if (policy.maxRetryMs < policy.initialRetryMs)
    throw new Error('PAYSAGA_EVENT_RETRY_MAX_MS must not be below PAYSAGA_EVENT_RETRY_INITIAL_MS');
  const raw = env.PAYSAGA_EVENT_ENDPOINTS;
  return {
    policy,
    ...(raw !== undefined ? { configured: raw.trim() === '' ? [] : parseConfiguredEndpoints(raw) } : {}),
    deliveryConcurrency:
      positiveInt(env, 'PAYSAGA_EVENT_DELIVERY_CONCURRENCY') ?? DEFAULT_DELIVERY_CONCURRENCY,
    pollMs: positiveInt(env, 'PAYSAGA_EVENT_POLL_MS') ?? DEFAULT_POLL_MS,
  };
}
