/**
 * A store of its own for a test: a fresh schema, migrated, in the run's embedded store (started by
 * test/global-setup.ts), so stacks of parallel tests never see each other's rows.
 *
 *   const store = await testStore();              // remember: await store.close()
 *   env.PAYSAGA_DATABASE_URL = store.config.url;  // for a process the test spawns
 *   env.PAYSAGA_DATABASE_SCHEMA = store.config.schema;
 */
import { randomBytes } from 'node:crypto';
import type { StoreConfig } from '../../store/config';
import { migrateStore, openStore, type Store } from '../../store/database';

export interface TestStore extends Store {
  config: StoreConfig;
  /** The variables a spawned paysaga process needs to use this store. */
  env: { PAYSAGA_DATABASE_URL: string; PAYSAGA_DATABASE_SCHEMA: string };
}

export function testDatabaseUrl(): string {
  const url = process.env.PAYSAGA_TEST_DATABASE_URL;
  if (!url)
    throw new Error('PAYSAGA_TEST_DATABASE_URL is not set: run tests through jest (test/global-setup.ts)');
  return url;
}

/** A unique schema name (`t_<hex>`), or `<prefix>_<hex>`. */
export function uniqueSchema(prefix = 't'): string {
  return `${prefix}_${randomBytes(6).toString('hex')}`;
}

export async function testStore(o: { migrate?: boolean; schema?: string } = {}): Promise<TestStore> {
  const config: StoreConfig = { url: testDatabaseUrl(), schema: o.schema ?? uniqueSchema(), poolSize: 4 };
  const store = openStore(config, { applicationName: 'paysaga-test' });
  if (o.migrate !== false) await migrateStore(store);
  return {
    ...store,
    config,
    env: { PAYSAGA_DATABASE_URL: config.url, PAYSAGA_DATABASE_SCHEMA: config.schema },
  };
}

/**
 * The variables of a fresh store for a paysaga process started from its environment: the run's embedded
 * store and a schema of its own, migrated by the process itself when it starts.
 */
export function testStoreEnv(): { PAYSAGA_DATABASE_URL: string; PAYSAGA_DATABASE_SCHEMA: string } {
  return { PAYSAGA_DATABASE_URL: testDatabaseUrl(), PAYSAGA_DATABASE_SCHEMA: uniqueSchema('p') };
}
