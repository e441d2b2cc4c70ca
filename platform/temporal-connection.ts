/**
 * Opening connections to Temporal from {@link TemporalSettings} (platform/temporal-config.ts): the same
 * address, TLS, API key and headers for the worker's `NativeConnection` and the client `Connection` of
 * the API and the CLI.
 *
 *   const settings = temporalSettingsFromEnv(env);
 *   const native = await NativeConnection.connect(temporalConnectionOptions(settings)); // worker
 *   const connection = await connectTemporalClient(settings);                          // API, CLI
 */
import { Connection, type TLSConfig } from '@temporalio/client';
import { describeTemporalSettings, type TemporalSettings } from './temporal-config';

/** Options both `Connection.connect` and `NativeConnection.connect` accept. */
export interface TemporalConnectionOptions {
  address: string;
  tls?: TLSConfig | boolean;
  apiKey?: string;
  metadata?: Record<string, string>;
}

export function temporalConnectionOptions(s: TemporalSettings): TemporalConnectionOptions {
  return {
    address: s.address,
    ...(s.tls !== undefined ? { tls: s.tls } : {}),
    ...(s.apiKey ? { apiKey: s.apiKey } : {}),
    ...(s.metadata ? { metadata: s.metadata } : {}),
  };
}

/** Thrown when Temporal cannot be reached (or refuses the TLS handshake or the credentials). */
export class TemporalConnectError extends Error {
  override name = 'TemporalConnectError';
}

/**
 * A client connection (API, CLI commands). It is checked before it is returned, so a wrong address, CA
 * or key fails here with a message naming the target rather than at the first call.
 */
export async function connectTemporalClient(
  s: TemporalSettings,
  o: { connectTimeoutMs?: number } = {},
): Promise<Connection> {
  try {
    return await Connection.connect({
      ...temporalConnectionOptions(s),
      ...(o.connectTimeoutMs !== undefined ? { connectTimeout: o.connectTimeoutMs } : {}),
    });
  } catch (err) {
    throw new TemporalConnectError(
      `cannot connect to Temporal at ${describeTemporalSettings(s)}: ${(err as Error).message}`,
      { cause: err },
    );
  }
}
