/**
 * The store of a paysaga process from its environment (store/config.ts), migrated before use: a process
 * that starts against an older schema brings it up to date (the Migrator's lock lets one do it). A store
 * that cannot be reached yet (a restart, an outage) is waited for, with a log line each try, up to
 * PAYSAGA_DATABASE_WAIT_MS (default 10 minutes); anything else fails at once.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describeStoreUrl, storeConfigFromEnv, StoreConfigError } from './config';
import { migrateStore, openStore, type Store } from './database';
import { isStoreUnavailable } from './errors';

const DEFAULT_WAIT_MS = 10 * 60_000;

export async function storeFromEnv(
  env: NodeJS.ProcessEnv,
  applicationName: string,
  log: (message: string) => void = () => undefined,
): Promise<Store> {
  const config = storeConfigFromEnv(env);
  if (!config)
    throw new StoreConfigError(
      'PAYSAGA_DATABASE_URL is not set: paysaga keeps its records in PostgreSQL ' +
        '(postgres://user:password@host:5432/database; `paysaga dev` runs an embedded one)',
    );
  const waitMs = Number(env.PAYSAGA_DATABASE_WAIT_MS?.trim() || DEFAULT_WAIT_MS);
  const until = Date.now() + (Number.isFinite(waitMs) && waitMs >= 0 ? waitMs : DEFAULT_WAIT_MS);
  const where = `${describeStoreUrl(config.url)} (schema ${config.schema})`;
  const store = openStore(config, { applicationName });
  for (;;) {
    try {
      await migrateStore(store);
      return store;
    } catch (err) {
      if (isStoreUnavailable(err) && Date.now() < until) {
        log(`the store at ${where} cannot be reached yet (${(err as Error).message}); trying again`);
        await sleep(2_000);
        continue;
      }
      await store.close().catch(() => undefined);
      throw new Error(`the store at ${where} could not be opened: ${(err as Error).message}`, { cause: err });
    }
  }
}
