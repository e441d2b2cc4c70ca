/**
 * `startApiFromEnv()`: the API as a process of its own, configured by environment variables
 * (see api/README.md): Temporal through common/temporal-config.ts, the provider through provider/config.ts.
 * It listens and returns a handle; whoever runs it (the `paysaga api` command, `paysaga dev`)
 * decides when to close it.
 */
import { Client, type Connection } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { PaymentsClient } from '../client/payments-client';
import { DEFAULT_SETTINGS } from '../client/settings';
import {
  createWebhookVerifier,
  providerClientFromConfig,
  providerConfigFromEnv,
  resolveEnvironment,
} from '../provider';
import { codecFromEnv } from '../common/codec';
import { temporalSettingsFromEnv } from '../common/temporal-config';
import { connectTemporalClient } from '../common/temporal-connection';
import { assertSearchAttributesRegistered } from '../common/search-attribute-check';
import type { SessionSettings } from '../workflows/types';
import { buildApi } from './app';

export const DEFAULT_API_PORT = 8080;
export const DEFAULT_API_HOST = '127.0.0.1';

export interface RunningApi {
  url: string;
  app: FastifyInstance;
  /** Stops accepting requests, lets in-flight ones finish, then closes the provider and Temporal connections. */
  close(): Promise<void>;
}

export interface StartApiOptions {
  /** Session settings (default: DEFAULT_SETTINGS); `paysaga dev` may pass shorter timings. */
  settings?: SessionSettings;
  /** Override PAYSAGA_API_PORT / PAYSAGA_API_HOST. */
  port?: number;
  host?: string;
}

function list(v: string | undefined): string[] {
  return (v ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

function port(v: string | undefined): number {
  if (v === undefined || v === '') return DEFAULT_API_PORT;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65_535)
    throw new Error(`PAYSAGA_API_PORT must be an integer 0..65535, got ${v}`);
  return n;
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
  const apiTokens = list(env.PAYSAGA_API_TOKENS);
  if (apiTokens.length === 0)
    throw new Error('PAYSAGA_API_TOKENS is not set: give one or more bearer tokens, comma-separated');
  const providerConfig = providerConfigFromEnv(env);
  const environment = resolveEnvironment(providerConfig);
  if (environment.serviceKeys.length === 0)
    throw new Error(
      `no service public key for the ${environment.name} environment: set ` +
        `PAYSAGA_PROVIDER_${environment.name.toUpperCase()}_SERVICE_KEYS (paths or PEM, comma-separated)`,
    );
  const verifyWebhook = createWebhookVerifier(environment.serviceKeys);
  const returnUrl = env.PAYSAGA_RETURN_URL || undefined;
  if (returnUrl) new URL(returnUrl); // throws on a malformed URL, at startup rather than per payer
  const temporalSettings = temporalSettingsFromEnv(env);
  // The same codec as the worker (PAYSAGA_CODEC_KEYS): without it the API could not read what the
  // worker encrypted (queries, results) and would start workflows with plain payloads.
  const codec = codecFromEnv(env);
  const settings = opts.settings ?? DEFAULT_SETTINGS;
  const listenPort = opts.port ?? port(env.PAYSAGA_API_PORT);
  const host = opts.host ?? (env.PAYSAGA_API_HOST || DEFAULT_API_HOST);

  const provider = providerClientFromConfig(providerConfig);
  let connection: Connection | undefined;
  try {
    connection = await connectTemporalClient(temporalSettings);
    await assertSearchAttributesRegistered(connection, temporalSettings.namespace);
    const temporal = new Client({
      connection,
      namespace: temporalSettings.namespace,
      ...(codec ? { dataConverter: { payloadCodecs: [codec] } } : {}),
    });
    const payments = new PaymentsClient({
      temporal,
      provider,
      taskQueue: temporalSettings.taskQueue,
      settings,
    });
    const app = buildApi({
      payments,
      provider,
      temporal,
      taskQueue: temporalSettings.taskQueue,
      settings,
      verifyWebhook,
      apiTokens,
      ...(returnUrl ? { returnUrl } : {}),
      ...(env.PAYSAGA_TEMPORAL_UI_URL ? { temporalUiUrl: env.PAYSAGA_TEMPORAL_UI_URL } : {}),
      logger: logger(env),
      ...(codec ? { codec } : {}),
      codecTokens: list(env.PAYSAGA_CODEC_TOKENS),
      ...(env.PAYSAGA_CODEC_CORS_ORIGINS ? { codecCorsOrigins: list(env.PAYSAGA_CODEC_CORS_ORIGINS) } : {}),
    });
    const url = await app.listen({ port: listenPort, host });
    const conn = connection;
    return {
      url,
      app,
      async close() {
        await app.close();
        await provider.close();
        await conn.close();
      },
    };
  } catch (err) {
    await provider.close();
    await connection?.close();
    throw err;
  }
}
