/**
 * Where and how worker, API and CLI processes reach Temporal, from Temporal's standard client
 * configuration (`@temporalio/envconfig`, the same as the Temporal CLI and the other SDKs read):
 *
 *   TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY,
 *   TEMPORAL_TLS, TEMPORAL_TLS_SERVER_CA_CERT_PATH|_DATA, TEMPORAL_TLS_CLIENT_CERT_PATH|_DATA,
 *   TEMPORAL_TLS_CLIENT_KEY_PATH|_DATA, TEMPORAL_TLS_SERVER_NAME, TEMPORAL_GRPC_META_<NAME>,
 *   TEMPORAL_CONFIG_FILE (a TOML file of profiles; default ~/.config/temporalio/temporal.toml),
 *   TEMPORAL_PROFILE (default `default`).
 *
 * Variables override the profile. paysaga's own defaults fill what neither sets: `127.0.0.1:7233`,
 * namespace `default`, no TLS. `TEMPORAL_CONFIG_FILE=` (set, empty) reads no file at all. An empty
 * variable counts as unset, as everywhere else in paysaga. PAYSAGA_TASK_QUEUE is paysaga's own.
 *
 * The connection itself is opened by platform/temporal-connection.ts.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import type { TLSConfig } from '@temporalio/client';

// smol-toml (envconfig's own TOML parser) ships CommonJS, but its types are declared as ES module only.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { parse: parseToml } = require('smol-toml') as { parse(toml: string): Record<string, unknown> };

export const DEFAULT_TEMPORAL_ADDRESS = '127.0.0.1:7233';
export const DEFAULT_TASK_QUEUE = 'paysaga';

export interface TemporalSettings {
  /** host:port of the Temporal frontend. */
  address: string;
  namespace: string;
  taskQueue: string;
  /** undefined or false: plaintext; true: TLS with the system's roots; an object: TLS as configured. */
  tls?: TLSConfig | boolean;
  /** Sent as `Authorization: Bearer <key>` (Temporal Cloud API keys); implies TLS unless TLS is disabled. */
  apiKey?: string;
  /** Extra gRPC headers (TEMPORAL_GRPC_META_*, `grpc_meta` of the profile). */
  metadata?: Record<string, string>;
  /** The profile the settings came from, when a config file had one (for messages). */
  profile?: string;
}

/** A configuration mistake: what is wrong and which variable or file says so. */
export class TemporalConfigError extends Error {
  override name = 'TemporalConfigError';
}

const BOOLEAN_VALUES = ['1', '0', 'true', 'false'];

/** envconfig takes every defined value, so an empty one would, e.g., make the address ''. */
function withoutEmptyValues(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) continue;
    // Kept empty on purpose: `TEMPORAL_CONFIG_FILE=` means "no file"; an empty gRPC header removes it.
    if (v === '' && k !== 'TEMPORAL_CONFIG_FILE' && !k.startsWith('TEMPORAL_GRPC_META_')) continue;
    out[k] = v;
  }
  return out;
}

/** Checks what envconfig would accept silently but get wrong. */
function checkVariables(env: Record<string, string>): void {
  for (const name of ['TEMPORAL_TLS', 'TEMPORAL_TLS_DISABLE_HOST_VERIFICATION']) {
    const v = env[name];
    if (v !== undefined && !BOOLEAN_VALUES.includes(v.toLowerCase()))
      throw new TemporalConfigError(`${name} must be one of ${BOOLEAN_VALUES.join(', ')}, got ${v}`);
  }
  const noVerify = env.TEMPORAL_TLS_DISABLE_HOST_VERIFICATION;
  if (noVerify === '1' || noVerify?.toLowerCase() === 'true')
    throw new TemporalConfigError(
      'TEMPORAL_TLS_DISABLE_HOST_VERIFICATION is not supported by the TypeScript SDK: set ' +
        'TEMPORAL_TLS_SERVER_NAME to a name the server certificate holds instead',
    );
  if (env.TEMPORAL_TLS?.toLowerCase() === 'true' || env.TEMPORAL_TLS?.toLowerCase() === 'false')
    env.TEMPORAL_TLS = env.TEMPORAL_TLS.toLowerCase();
}

/** Uint8Array from envconfig -> Buffer, which the native worker connection expects. */
function tlsWithBuffers(tls: TLSConfig | boolean | undefined): TLSConfig | boolean | undefined {
  if (tls === undefined || typeof tls === 'boolean') return tls;
  const buf = (b: Uint8Array | undefined) => (b ? Buffer.from(b) : undefined);
  const ca = buf(tls.serverRootCACertificate);
  const crt = buf(tls.clientCertPair?.crt);
  const key = buf(tls.clientCertPair?.key);
  return {
    ...(tls.serverNameOverride ? { serverNameOverride: tls.serverNameOverride } : {}),
    ...(ca ? { serverRootCACertificate: ca } : {}),
    ...(crt && key ? { clientCertPair: { crt, key } } : {}),
  };
}

/** The file envconfig reads: TEMPORAL_CONFIG_FILE, else Temporal's default path for this platform. */
function configFilePath(vars: Record<string, string>): string | undefined {
  if (vars.TEMPORAL_CONFIG_FILE !== undefined) return vars.TEMPORAL_CONFIG_FILE || undefined;
  let dir: string | undefined;
  if (os.platform() === 'win32') dir = vars.APPDATA;
  else if (os.platform() === 'darwin')
    dir = vars.HOME && path.join(vars.HOME, 'Library', 'Application Support');
  else if (vars.XDG_CONFIG_HOME)
    dir = path.isAbsolute(vars.XDG_CONFIG_HOME) ? vars.XDG_CONFIG_HOME : undefined;
  else dir = vars.HOME && path.join(vars.HOME, '.config');
  return dir && path.join(dir, 'temporalio', 'temporal.toml');
}

/**
 * Whether the config file exists and holds no profile at all (empty, or comments only). The Temporal CLI
 * reads such a file as "no profiles", but envconfig 1.24.0 fails on it with a TypeError, so it is then
 * not handed to envconfig. A file that does not parse is left to envconfig, whose error names the problem.
 */
function configFileWithoutProfiles(vars: Record<string, string>): string | undefined {
  const file = configFilePath(vars);
  if (!file) return undefined;
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return undefined; // missing or unreadable: envconfig's own handling
  }
  try {
    return parseToml(text).profile === undefined ? file : undefined;
  } catch {
    return undefined;
  }
}

/** Settings of worker and API processes and CLI commands (see the file comment). */
export function temporalSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): TemporalSettings {
  const vars = withoutEmptyValues(env);
  checkVariables(vars);
  const file = vars.TEMPORAL_CONFIG_FILE;
  const context = [
    ...(file ? [`TEMPORAL_CONFIG_FILE=${file}`] : []),
    ...(vars.TEMPORAL_PROFILE ? [`profile ${vars.TEMPORAL_PROFILE}`] : []),
  ];
  const mistake = (message: string, cause?: unknown) =>
    new TemporalConfigError(
      `Temporal connection settings${context.length ? ` (${context.join(', ')})` : ''}: ${message}`,
      cause === undefined ? undefined : { cause },
    );
  const withoutProfiles = configFileWithoutProfiles(vars);
  if (withoutProfiles && vars.TEMPORAL_PROFILE)
    throw mistake(`Profile '${vars.TEMPORAL_PROFILE}' not found: ${withoutProfiles} holds no profile`);
  let loaded;
  try {
    loaded = loadClientConnectConfig({
      overrideEnvVars: vars,
      ...(withoutProfiles ? { disableFile: true } : {}),
    });
  } catch (err) {
    // Certificate files are read here too; their errors name the path.
    throw mistake((err as Error).message, err);
  }
  const o = loaded.connectionOptions;
  const clientCertOnly =
    (vars.TEMPORAL_TLS_CLIENT_CERT_PATH || vars.TEMPORAL_TLS_CLIENT_CERT_DATA) &&
    !(vars.TEMPORAL_TLS_CLIENT_KEY_PATH || vars.TEMPORAL_TLS_CLIENT_KEY_DATA);
  const keyOnly =
    (vars.TEMPORAL_TLS_CLIENT_KEY_PATH || vars.TEMPORAL_TLS_CLIENT_KEY_DATA) &&
    !(vars.TEMPORAL_TLS_CLIENT_CERT_PATH || vars.TEMPORAL_TLS_CLIENT_CERT_DATA);
  if (clientCertOnly || keyOnly)
    throw new TemporalConfigError(
      'mTLS needs both TEMPORAL_TLS_CLIENT_CERT_PATH (or _DATA) and TEMPORAL_TLS_CLIENT_KEY_PATH (or _DATA)',
    );
  const tls = tlsWithBuffers((o.tls ?? undefined) as TLSConfig | boolean | undefined);
  const apiKey = typeof o.apiKey === 'string' && o.apiKey !== '' ? o.apiKey : undefined;
  // From the environment and a TOML file every header value is a string.
  const metadata =
    o.metadata && Object.keys(o.metadata).length > 0
      ? Object.fromEntries(Object.entries(o.metadata).map(([k, v]) => [k, String(v)]))
      : undefined;
  return {
    address: o.address || DEFAULT_TEMPORAL_ADDRESS,
    namespace: loaded.namespace || 'default',
    taskQueue: env.PAYSAGA_TASK_QUEUE || DEFAULT_TASK_QUEUE,
    ...(tls !== undefined ? { tls } : {}),
    ...(apiKey ? { apiKey } : {}),
    ...(metadata ? { metadata } : {}),
    ...(vars.TEMPORAL_PROFILE ? { profile: vars.TEMPORAL_PROFILE } : {}),
  };
}

/** For logs and messages: address, namespace and how it is secured, never a key or certificate. */
export function describeTemporalSettings(s: TemporalSettings): string {
  const parts = [`${s.address} namespace ${s.namespace}`];
  if (s.tls === undefined || s.tls === false) parts.push('plaintext');
  else if (s.tls === true) parts.push('TLS');
  else {
    const tls: string[] = [];
    if (s.tls.serverRootCACertificate) tls.push('own CA');
    if (s.tls.serverNameOverride) tls.push(`server name ${s.tls.serverNameOverride}`);
    if (s.tls.clientCertPair) tls.push('client certificate');
    parts.push(tls.length ? `TLS (${tls.join(', ')})` : 'TLS');
  }
  if (s.apiKey) parts.push('API key');
  if (s.profile) parts.push(`profile ${s.profile}`);
  return parts.join(', ');
}

/** Variables that change how a process reaches Temporal (besides TEMPORAL_ADDRESS and _NAMESPACE). */
function isConnectionVariable(name: string): boolean {
  return (
    name === 'TEMPORAL_API_KEY' ||
    name === 'TEMPORAL_PROFILE' ||
    name === 'TEMPORAL_CONFIG_FILE' ||
    name.startsWith('TEMPORAL_TLS') ||
    name.startsWith('TEMPORAL_GRPC_META_')
  );
}

/**
 * `env` for processes that must talk to a local plaintext server (`paysaga dev`'s embedded dev server)
 * whatever the user's environment or config file says about a remote cluster: the address and
 * namespace are set, TLS, API key, headers and profiles are dropped, and no config file is read.
 */
export function envForLocalTemporal(
  env: NodeJS.ProcessEnv,
  address: string,
  namespace: string,
): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) if (!isConnectionVariable(k)) out[k] = v;
  return { ...out, TEMPORAL_ADDRESS: address, TEMPORAL_NAMESPACE: namespace, TEMPORAL_CONFIG_FILE: '' };
}
