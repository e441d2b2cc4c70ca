import type { OutboundPolicy } from '../platform/outbound-guard';
import type { ApiToken } from './api-tokens';
import type { PublicRateLimit } from './plugins/public-rate-limit';
import type { Client } from '@temporalio/client';
import type { PayloadCodec } from '@temporalio/common';
import type { FastifyServerOptions } from 'fastify';
import type { PaymentsClient } from '../client/payments-client';
import type { createWebhookVerifier, ProviderClient } from '../provider';
import type { SessionSettings } from '../common/settings';
import type { Store } from '../store/database';
import type { SigningKeys } from '../platform/event-secrets';

/** Everything the API talks to, built once by the caller (startApiFromEnv, `paysaga dev`, tests). */
export interface ApiDeps {
  /** Server timeouts (api/app.ts has the defaults); tests shorten them. */
  timeouts?: { requestMs?: number; idleMs?: number };
  payments: PaymentsClient;
  /** For the pass-through routes (public tokens, banks, token info, recurring-token disable). */
  provider: ProviderClient;
  temporal: Client;
  taskQueue: string;
  /** paysaga's store of record: what the API reads (sessions, events, deliveries, reconciliation). */
  store: Store;
  /**
   * Event endpoints: the keys their secrets derive from, how many there may be, how long redeliveries
   * try, and which URLs may be registered (default: https to public addresses only).
   */
  events?: {
    signingKeys?: SigningKeys;
    maxEndpoints?: number;
    retryForMs?: number;
    outbound?: OutboundPolicy;
  };
  /** Used when a webhook starts a late-event workflow. */
  settings: SessionSettings;
  /** Built once at startup with the service public key(s). */
  verifyWebhook: ReturnType<typeof createWebhookVerifier>;
  /**
   * Bearer tokens accepted on /v1/* with their scopes (api/api-tokens.ts); a plain string may do
   * everything. Empty: every /v1 request is refused.
   */
  apiTokens: (string | ApiToken)[];
  /** Requests per address on the public listener (default 1200 a minute); false: no limit. */
  publicRateLimit?: PublicRateLimit | false;
  /** Refusals (401, 403) an address may earn per window before it gets 429 (default 20 a minute). */
  authFailures?: { maxFailures: number; windowMs: number };
  /**
   * Addresses and CIDR ranges of the proxies in front of the API (PAYSAGA_TRUST_PROXY, api/trust-proxy.ts):
   * a request from one of them is counted under the client address its X-Forwarded-For reports. Empty
   * or absent: the header is ignored, every request is its socket's address.
   */
  trustProxy?: string[];
  /** Which listener serves the partner API /v1 (default `internal`). */
  v1Listener?: 'public' | 'internal';
  /**
   * Secrets that verify the token of `/return/<session id>?t=<token>` (PAYSAGA_RETURN_SECRETS; the first
   * one mints, in client/return-url.ts). Empty: no return is valid, every one is a 404.
   */
  returnSecrets?: string[];
  /** Partner page the payer is sent to (303, with ?session_id=) after returning; else a small result page. */
  returnUrl?: string;
  /** At most one state check per session this often, however often its return page is hit (default 5000 ms). */
  returnCheckIntervalMs?: number;
  /** Base URL of the Temporal UI, for `links.temporal` (default: env PAYSAGA_TEMPORAL_UI_URL). */
  temporalUiUrl?: string;
  /** How long the return page waits for the session to settle (default 3000 ms). */
  returnWaitMs?: number;
  logger?: FastifyServerOptions['logger'];
  /**
   * The payload codec of the worker: with it, POST /codec/encode and /codec/decode serve the Temporal
   * UI (its codec endpoint setting) so staff can read encrypted sessions. Without it, no codec routes.
   */
  codec?: PayloadCodec;
  /** Bearer tokens for the codec routes; empty: open, allowed only while the internal listener is on loopback. */
  codecTokens?: string[];
  /** Origins allowed to call the codec routes from a browser (the Temporal UI), default none. */
  codecCorsOrigins?: string[];
}
