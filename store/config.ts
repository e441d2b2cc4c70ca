/**
 * Where the store is (docs/configuration.md):
 *
 *   PAYSAGA_DATABASE_URL     postgres://user:password@host:port/database of a PostgreSQL server (or of the
 *                            embedded store `paysaga dev` serves); required outside `paysaga dev`
 *   PAYSAGA_DATABASE_SCHEMA  the schema paysaga's tables live in (default `paysaga`): several deployments
 *                            may share one database, each in its own schema
 *   PAYSAGA_DATABASE_POOL    connections per process (default 10)
 */
import { z } from 'zod';

export interface StoreConfig {
  url: string;
  schema: string;
  poolSize: number;
}

export const DEFAULT_SCHEMA = 'paysaga';
const DEFAULT_POOL = 10;

/** A schema name PostgreSQL takes unquoted: letters, digits and `_`, not starting with a digit. */
export const schemaName = z
  .string()
  .regex(
    /^[a-z_][a-z0-9_]{0,62}$/,
    'a lower-case identifier: a-z, 0-9 and _, at most 63, not starting with a digit',
  );

export class StoreConfigError extends Error {
  override name = 'StoreConfigError';
}

/** The store's configuration from the environment, or undefined when PAYSAGA_DATABASE_URL is unset. */
export function storeConfigFromEnv(env: NodeJS.ProcessEnv = process.env): StoreConfig | undefined {
  const url = env.PAYSAGA_DATABASE_URL?.trim();
  if (!url) return undefined;
  if (!/^postgres(ql)?:\/\//.test(url))
    throw new StoreConfigError('PAYSAGA_DATABASE_URL: a postgres:// or postgresql:// URL');
  const schema = schemaName.safeParse(env.PAYSAGA_DATABASE_SCHEMA?.trim() || DEFAULT_SCHEMA);
  if (!schema.success)
    throw new StoreConfigError(`PAYSAGA_DATABASE_SCHEMA: ${schema.error.issues[0]?.message ?? 'invalid'}`);
  const pool = Number(env.PAYSAGA_DATABASE_POOL?.trim() || DEFAULT_POOL);
  if (!Number.isSafeInteger(pool) || pool < 1 || pool > 200)
    throw new StoreConfigError('PAYSAGA_DATABASE_POOL: a whole number from 1 to 200');
  return { url, schema: schema.data, poolSize: pool };
}

/** The URL with its password replaced, for logs. */
export function describeStoreUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparseable URL)';
  }
}
