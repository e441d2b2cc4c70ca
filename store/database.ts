/**
 * The connection to the store: Kysely over node-postgres, every table in the deployment's schema.
 *
 *   const store = openStore(config);          // store/config.ts
 *   await migrateStore(store);                // idempotent
 *   await store.db.selectFrom('sessions')...  // typed by store/schema.ts
 *   await store.close();
 *
 * Kysely (not an ORM): each query reads as the SQL it sends, typed by the table interfaces, and the
 * same code runs against a PostgreSQL server and the embedded store (store/embedded.ts).
 */
import { Kysely, Migrator, PostgresDialect, sql, type MigrationResultSet } from 'kysely';
import pg from 'pg';
import type { StoreConfig } from './config';
import { MIGRATIONS } from './migrations';
import { preparingPool } from './prepared';
import type { Database } from './schema';
import { storableParametersPlugin } from './text';

const INT8_OID = 20;

export interface Store {
  /** Queries name the schema's tables (Kysely's withSchema): nothing relies on the search_path. */
  db: Kysely<Database>;
  schema: string;
  close(): Promise<void>;
}

/**
 * A table of the deployment's schema named in raw SQL (sql`...`): Kysely's withSchema qualifies the
 * tables of built queries only, not those written into a template.
 */
export function schemaTable(schema: string, table: keyof Database & string) {
  return sql.id(schema, table);
}

export function openStore(config: StoreConfig, o: { applicationName?: string } = {}): Store {
  const pool = new pg.Pool({
    connectionString: config.url,
    max: config.poolSize,
    // A store that does not answer must not hold a request forever: the caller retries (activities) or
    // answers 503 (the API).
    connectionTimeoutMillis: 10_000,
    idleTimeoutMillis: 30_000,
    application_name: o.applicationName ?? 'paysaga',
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8_OID
          ? (v: string) => Number(v)
          : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // A connection the server dropped (a restart, a crash) must never be an error event nobody hears: Node
  // turns that into an uncaught exception and the process dies. The pool hears its idle connections; a
  // connection lent out (a transaction between two statements) is heard here, and its next statement
  // fails as the store being unavailable (store/errors.ts), which the caller retries.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  const root = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: preparingPool(pool) }),
    plugins: [storableParametersPlugin()],
  });
  return {
    db: root.withSchema(config.schema),
    schema: config.schema,
    close: () => root.destroy(),
  };
}

/** Applies every migration not applied yet (in a transaction, under the Migrator's lock). */
export async function migrateStore(store: Store): Promise<MigrationResultSet> {
  const migrator = new Migrator({
    db: store.db,
    provider: { getMigrations: async () => MIGRATIONS },
    migrationTableSchema: store.schema,
  });
  const result = await migrator.migrateToLatest();
  if (result.error) throw result.error;
  return result;
}

/** Applies migrations up to and including `name` (tests of an upgrade). */
export async function migrateStoreTo(store: Store, name: string): Promise<MigrationResultSet> {
  const migrator = new Migrator({
    db: store.db,
    provider: { getMigrations: async () => MIGRATIONS },
    migrationTableSchema: store.schema,
  });
  const result = await migrator.migrateTo(name);
  if (result.error) throw result.error;
  return result;
}

/** Answers when the store does (health checks). */
export async function pingStore(store: Store): Promise<void> {
  await sql`select 1`.execute(store.db);
}
