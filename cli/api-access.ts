/**
 * How the commands that talk to the HTTP API (`events tail`, `webhooks replay`) find it: `--api` /
 * `PAYSAGA_API_URL`, else the running `paysaga dev` of the data folder, else the internal listener's
 * default address (where `/v1` is served); the token
 * from `--token` / `PAYSAGA_API_TOKEN`, else `<data>/api-token`.
 */
import { PaysagaApiClient, type PaysagaApiClientOptions } from '../client/http';
import { processAlive, readApiToken, readDevState, resolveDataDir } from './dev/data-dir';

/** Where `/v1` is served by default: the internal listener (api/README.md). */
export const DEFAULT_API_URL = 'http://127.0.0.1:8081';

export interface ApiAccessOptions {
  data?: string;
  api?: string;
  token?: string;
}

export function apiClientFor(
  opts: ApiAccessOptions,
  env: NodeJS.ProcessEnv,
  client: Omit<PaysagaApiClientOptions, 'baseUrl' | 'token'> = {},
): { api: PaysagaApiClient; apiUrl: string } {
  const dataDir = resolveDataDir(opts.data, env);
  const saved = readDevState(dataDir);
  const state = saved && processAlive(saved.pid) ? saved : undefined;
  const apiUrl = (opts.api || env.PAYSAGA_API_URL || state?.apiUrl || DEFAULT_API_URL).replace(/\/+$/, '');
  const token = opts.token || env.PAYSAGA_API_TOKEN || readApiToken(dataDir);
  if (!token)
    throw new Error(
      `no API token: pass --token or PAYSAGA_API_TOKEN, or start \`paysaga dev\` (it writes ${dataDir}/api-token)`,
    );
  return { api: new PaysagaApiClient({ baseUrl: apiUrl, token, ...client }), apiUrl };
}
