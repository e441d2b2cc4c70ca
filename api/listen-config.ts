/**
 * Where the API listens and how the payer's return is bound, from the environment (api/README.md):
 * PAYSAGA_PUBLIC_HOST/PORT, PAYSAGA_INTERNAL_HOST/PORT, PAYSAGA_V1_LISTENER, PAYSAGA_PUBLIC_URL,
 * PAYSAGA_RETURN_SECRETS, PAYSAGA_RETURN_URL. Every mistake is reported here, before anything opens.
 */
import { returnSecretsFromEnv } from '../client/return-url';
import { DEFAULT_INTERNAL, DEFAULT_PUBLIC, type ListenAddress, type Listener } from './listeners';

export interface ListenOverrides {
  /** Override PAYSAGA_PUBLIC_HOST / PAYSAGA_PUBLIC_PORT (`paysaga api --public-port`, `paysaga dev`). */
  public?: Partial<ListenAddress>;
  /** Override PAYSAGA_INTERNAL_HOST / PAYSAGA_INTERNAL_PORT. */
  internal?: Partial<ListenAddress>;
  /**
   * Without PAYSAGA_PUBLIC_URL, use the public listener's own address as the back_url base (`paysaga
   * dev`, where payer and provider run on this machine). Otherwise its absence turns returns off.
   */
  derivePublicUrl?: boolean;
}

export interface ListenConfig {
  public: ListenAddress;
  internal: ListenAddress;
  v1Listener: Listener;
  /** PAYSAGA_PUBLIC_URL: the base of every session's back_url. */
  publicUrl?: string;
  /** PAYSAGA_RETURN_SECRETS; empty: returns are off (the provider gets the partner's backUrl as given). */
  returnSecrets: string[];
  /** PAYSAGA_RETURN_URL: the partner's page after the return page. */
  returnUrl?: string;
}

const REMOVED: Record<string, string> = {
  PAYSAGA_API_PORT:
    'PAYSAGA_PUBLIC_PORT (webhooks, payer returns) and PAYSAGA_INTERNAL_PORT (/v1, docs, metrics, codec)',
  PAYSAGA_API_HOST: 'PAYSAGA_PUBLIC_HOST and PAYSAGA_INTERNAL_HOST',
};

function port(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const v = env[name];
  if (v === undefined || v === '') return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65_535)
    throw new Error(`${name} must be an integer 0..65535, got ${v}`);
  return n;
}

function httpUrl(name: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`${name} is not a URL: ${value}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new Error(`${name} must be http(s): ${value}`);
  return value;
}

/** The variables of the one-listener API are refused rather than ignored: they meant something else. */
export function assertNoRemovedVariables(env: NodeJS.ProcessEnv): void {
  for (const [name, replacement] of Object.entries(REMOVED)) {
    if (env[name])
      throw new Error(
        `${name} is no longer read: the API listens twice, set ${replacement} instead (api/README.md)`,
      );
  }
}

export function listenConfigFromEnv(env: NodeJS.ProcessEnv, o: ListenOverrides = {}): ListenConfig {
  assertNoRemovedVariables(env);
  const v1 = env.PAYSAGA_V1_LISTENER || 'internal';
  if (v1 !== 'internal' && v1 !== 'public')
    throw new Error(`PAYSAGA_V1_LISTENER must be internal or public, got ${v1}`);
  // The names are spelled out so that scripts/check-deploy.js finds them read.
  const address = (
    hostVar: 'PAYSAGA_PUBLIC_HOST' | 'PAYSAGA_INTERNAL_HOST',
    portVar: 'PAYSAGA_PUBLIC_PORT' | 'PAYSAGA_INTERNAL_PORT',
    fallback: ListenAddress,
    given?: Partial<ListenAddress>,
  ) => ({
    host: given?.host ?? (env[hostVar] || fallback.host),
    port: given?.port ?? port(env, portVar, fallback.port),
  });

  const returnSecrets = returnSecretsFromEnv(env);
  const publicUrl = env.PAYSAGA_PUBLIC_URL
    ? httpUrl('PAYSAGA_PUBLIC_URL', env.PAYSAGA_PUBLIC_URL)
    : undefined;
  if (publicUrl && returnSecrets.length === 0)
    throw new Error(
      'PAYSAGA_PUBLIC_URL is set but PAYSAGA_RETURN_SECRETS is not: give one or more secrets (comma-separated, ' +
        'the first signs) so that each back_url can be bound to its session',
    );
  if (!publicUrl && returnSecrets.length > 0 && !o.derivePublicUrl)
    throw new Error(
      'PAYSAGA_RETURN_SECRETS is set but PAYSAGA_PUBLIC_URL is not: set it to the base URL at which the ' +
        'provider and payers reach the public listener (e.g. https://pay.example.com)',
    );
  const returnUrl = env.PAYSAGA_RETURN_URL
    ? httpUrl('PAYSAGA_RETURN_URL', env.PAYSAGA_RETURN_URL)
    : undefined;

  return {
    public: address('PAYSAGA_PUBLIC_HOST', 'PAYSAGA_PUBLIC_PORT', DEFAULT_PUBLIC, o.public),
    internal: address('PAYSAGA_INTERNAL_HOST', 'PAYSAGA_INTERNAL_PORT', DEFAULT_INTERNAL, o.internal),
    v1Listener: v1,
    ...(publicUrl ? { publicUrl } : {}),
    returnSecrets,
    ...(returnUrl ? { returnUrl } : {}),
  };
}
