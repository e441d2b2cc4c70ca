/**
 * `startApiFromEnv()`: the API as a process of its own, configured by environment variables
 * (see api/README.md): Temporal through platform/temporal-config.ts, the provider through provider/config.ts,
 * its two listeners and the payer's return through api/listen-config.ts.
 * It listens and returns a handle; whoever runs it (the `paysaga api` command, `paysaga dev`)
 * decides when to close it.
 */
import { Client, type Connection } from '@temporalio/client';
import { PaymentsClient } from '../client/payments-client';
import { storeFromEnv } from '../store/from-env';
import { signingKeysFromEnv } from '../platform/event-secrets';
import type { Store } from '../store/database';
import { DeferredReturnUrls, ReturnUrls } from '../client/return-url';
import { DEFAULT_SETTINGS, type SessionSettings } from '../common/settings';
import {
  projectFor,
  providerClientFromConfig,
  providerConfigFromEnv,
  resolveEnvironment,
  webhookVerifierFromConfig,
} from '../provider';
import { assertCodecConfigured, codecFromEnv } from '../platform/codec';
import { hostsOf, outboundPolicyFromEnv } from '../platform/outbound-guard';
import { temporalSettingsFromEnv } from '../platform/temporal-config';
import { connectTemporalClient } from '../platform/temporal-connection';
import { assertSearchAttributesRegistered } from '../platform/search-attribute-check';
import { buildApi, type PaysagaApi } from './app';
import { parseApiTokens } from './api-tokens';
import { listenConfigFromEnv, type ListenOverrides } from './listen-config';
import { trustProxyFromEnv } from './trust-proxy';
import { assertCodecProtected } from './listeners';
import { clientInterceptors } from '../client/ask-again';

export interface RunningApi {
  /** Where the partner API /v1 is served (the internal listener unless PAYSAGA_V1_LISTENER=public). */
  url: string;
  /** The public listener: /webhooks/provider, /return/{sessionId}. */
  publicUrl: string;
  /** The internal listener: /healthz, /metrics, /docs, /openapi.json, /codec/*. */
  internalUrl: string;
  /** Base of the back_url given to the provider (PAYSAGA_PUBLIC_URL or derived); none: returns are off. */
  returnBaseUrl?: string;
  api: PaysagaApi;
  /** Stops accepting requests, lets in-flight ones finish, then closes the provider and Temporal connections. */
  close(): Promise<void>;
}

export interface StartApiOptions extends ListenOverrides {
  /** Session settings (default: DEFAULT_SETTINGS); `paysaga dev` may pass shorter timings. */
  settings?: SessionSettings;
}

function list(v: string | undefined): string[] {
  return (v ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

function logger(env: NodeJS.ProcessEnv) {
  const level = env.PAYSAGA_LOG_LEVEL || 'info';
  if (level === 'silent') return false;
  // Authorization and signatures stay out of logs even if someone turns header logging on.
  return { level, redact: ['req.headers.authorization', 'req.headers["x-signature"]'] };
}

export async function startApiFromEnv(
  env: NodeJS.ProcessEnv = process.env,
  opts: StartApiOptions = {},
): Promise<RunningApi> {
  // Configuration first: a mistake is reported before anything is opened.
  // PAYSAGA_API_TOKENS: `<token>[:<scope>+<scope>]`, each at least 32 characters (api/api-tokens.ts).
  const apiTokens = parseApiTokens(env.PAYSAGA_API_TOKENS);
  // PAYSAGA_AUTH_MAX_FAILURES: refused requests (401, 403) per client address per minute before 429.
  // PAYSAGA_PUBLIC_RATE_LIMIT: requests per client address per minute on the public listener (0: none).
  const publicLimit = env.PAYSAGA_PUBLIC_RATE_LIMIT?.trim();
  if (publicLimit && !/^\d+$/.test(publicLimit))
    throw new Error(`PAYSAGA_PUBLIC_RATE_LIMIT must be a whole number (0: no limit), got ${publicLimit}`);
  const publicRateLimit =
    publicLimit === undefined || publicLimit === ''
      ? undefined
      : publicLimit === '0'
        ? (false as const)
        : { max: Number(publicLimit), windowMs: 60_000 };
  // PAYSAGA_TRUST_PROXY: the proxies whose X-Forwarded-For names the client (api/trust-proxy.ts).
  const trustProxy = trustProxyFromEnv(env);
  const authFailures = env.PAYSAGA_AUTH_MAX_FAILURES
    ? { maxFailures: positive(env, 'PAYSAGA_AUTH_MAX_FAILURES'), windowMs: 60_000 }
    : undefined;
  const providerConfig = providerConfigFromEnv(env);
  const environment = resolveEnvironment(providerConfig);
  if (environment.serviceKeys.length === 0)
    throw new Error(
      `no service public key for the ${environment.name} environment: set ` +
        `PAYSAGA_PROVIDER_${environment.name.toUpperCase()}_SERVICE_KEYS (paths or PEM, comma-separated)`,
    );
  // PAYSAGA_WITHDRAWN_KEYS: keys withdrawn since start, re-read as it changes (provider/withdrawn-keys.ts).
  const verifyWebhook = webhookVerifierFromConfig(providerConfig);
  const listen = listenConfigFromEnv(env, opts);
  const temporalSettings = temporalSettingsFromEnv(env);
  // The same codec as the worker (PAYSAGA_CODEC_KEYS): without it the API could not read what the
  // worker encrypted (queries, results) and would start workflows with plain payloads.
  // Answers nobody encrypted are refused, not read (the codec route shows them: api/routes/codec.ts).
  const codec = codecFromEnv(env, 'refuse');
  assertCodecConfigured(env, codec, 'paysaga api');
  // PAYSAGA_EVENT_ALLOW_HTTP, PAYSAGA_EVENT_ALLOW_HOSTS: which endpoint URLs may be registered.
  const outbound = outboundPolicyFromEnv(env, hostsOf([temporalSettings.address]));
  const codecTokens = list(env.PAYSAGA_CODEC_TOKENS);
  assertCodecProtected({ codec: !!codec, tokens: codecTokens, host: listen.internal.host });
  const settings = opts.settings ?? DEFAULT_SETTINGS;
  // A derived public URL is known only once the public listener listens (port 0); checkouts come later.
  const returnUrls = listen.returnSecrets.length > 0 ? new DeferredReturnUrls() : undefined;
  if (returnUrls && listen.publicUrl)
    returnUrls.resolve(new ReturnUrls(listen.publicUrl, listen.returnSecrets));

  const provider = providerClientFromConfig(providerConfig);
  let connection: Connection | undefined;
  let store: Store | undefined;
  try {
    // PAYSAGA_DATABASE_URL: the store the API reads (migrated here if it is behind).
    store = await storeFromEnv(env, 'paysaga-api', (m) => process.stderr.write(`paysaga api: ${m}\n`));
    connection = await connectTemporalClient(temporalSettings);
    await assertSearchAttributesRegistered(connection, temporalSettings.namespace);
    const temporal = new Client({
      connection,
      namespace: temporalSettings.namespace,
      interceptors: clientInterceptors(),
      ...(codec ? { dataConverter: { payloadCodecs: [codec] } } : {}),
    });
    const payments = new PaymentsClient({
      temporal,
      provider,
      store,
      taskQueue: temporalSettings.taskQueue,
      settings,
      // PAYSAGA_PROVIDER_ENV: only the test environment (the sandbox) bills in periods under a day.
      providerEnvironment: environment.name,
      ...(returnUrls ? { returnUrls } : {}),
      projectFor: (use) => {
        const id = projectFor(providerConfig, use);
        return id === providerConfig.projectId ? undefined : id;
      },
    });
    const api = buildApi({
      payments,
      provider,
      temporal,
      taskQueue: temporalSettings.taskQueue,
      store,
      events: {
        signingKeys: signingKeysFromEnv(env),
        outbound,
        ...(env.PAYSAGA_EVENT_MAX_ENDPOINTS
          ? { maxEndpoints: positive(env, 'PAYSAGA_EVENT_MAX_ENDPOINTS') }
          : {}),
        ...(env.PAYSAGA_EVENT_RETRY_FOR_MS
          ? { retryForMs: positive(env, 'PAYSAGA_EVENT_RETRY_FOR_MS') }
          : {}),
      },
      settings,
      verifyWebhook,
      apiTokens,
      ...(authFailures ? { authFailures } : {}),
      ...(trustProxy.length > 0 ? { trustProxy } : {}),
      ...(publicRateLimit !== undefined ? { publicRateLimit } : {}),
      v1Listener: listen.v1Listener,
      returnSecrets: listen.returnSecrets,
      ...(listen.returnUrl ? { returnUrl: listen.returnUrl } : {}),
      ...(env.PAYSAGA_TEMPORAL_UI_URL ? { temporalUiUrl: env.PAYSAGA_TEMPORAL_UI_URL } : {}),
      logger: logger(env),
      ...(codec ? { codec } : {}),
      codecTokens,
      ...(env.PAYSAGA_CODEC_CORS_ORIGINS ? { codecCorsOrigins: list(env.PAYSAGA_CODEC_CORS_ORIGINS) } : {}),
    });
    const urls = await api.listen({ public: listen.public, internal: listen.internal });
    if (returnUrls && !returnUrls.resolved)
      returnUrls.resolve(new ReturnUrls(urls.publicUrl, listen.returnSecrets));
    if (!returnUrls)
      api.public.log.warn(
        'payer returns are off (PAYSAGA_PUBLIC_URL, PAYSAGA_RETURN_SECRETS unset): the provider gets each ' +
          "checkout's backUrl as given, and /return answers 404",
      );
    const conn = connection;
    const db = store;
    return {
      url: urls.v1Url,
      publicUrl: urls.publicUrl,
      internalUrl: urls.internalUrl,
      ...(returnUrls?.resolved ? { returnBaseUrl: returnUrls.resolved.publicUrl } : {}),
      api,
      async close() {
        await api.close();
        await provider.close();
        await conn.close();
        await db.close();
      },
    };
  } catch (err) {
    await provider.close();
    await connection?.close();
    await store?.close();
    throw err;
  }
}

/** A positive whole number from `env[name]`; throws naming the variable. */
function positive(env: NodeJS.ProcessEnv, name: string): number {
  const n = Number(env[name]);
  if (!Number.isSafeInteger(n) || n <= 0) throw new Error(`${name} must be a positive whole number`);
  return n;
}
