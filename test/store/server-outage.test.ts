/**
 * The store's connections survive the server going away mid-transaction (the store can fail).
 * node-postgres's pool stops listening for a connection's errors while the connection is lent out; a
 * server that crashes then (here: `pg_ctl stop -m immediate` while a transaction waits between two
 * statements) emits an error nobody hears, which Node turns into an uncaught exception: the worker or
 * API process dies (both workers of a reliability run were gone after a store crash). Jest reports such an
 * error as the suite failing to run. Here the transaction fails as the store being unavailable (so an
 * activity retries it), and the store answers again once the server is back.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { sql } from 'kysely';
import { migrateStore, openStore, type Store } from '../../store/database';
import { isStoreUnavailable } from '../../store/errors';
import { createDatabase, startPostgres, type Postgres } from '../cluster/postgres';

jest.setTimeout(120_000);

let dir: string;
let postgres: Postgres;
let store: Store;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paysaga-store-outage-'));
  postgres = await startPostgres(dir);
  const url = await createDatabase(postgres, 'paysaga');
  store = openStore({ url, schema: 'paysaga', poolSize: 4 });
  await migrateStore(store);
});

afterAll(async () => {
  await store?.close();
  await postgres?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

it('a crash of the server during a transaction fails that transaction as unavailable, and nothing else', async () => {
  let inside!: () => void;
  const begun = new Promise<void>((resolve) => (inside = resolve));
  let crashed!: () => void;
  const afterCrash = new Promise<void>((resolve) => (crashed = resolve));
  const transaction = store.db.transaction().execute(async (trx) => {
    await sql`select 1`.execute(trx);
    inside();
    await afterCrash; // the connection is lent out and idle here when the server goes away
    await sql`select 2`.execute(trx);
  });
  const failure = transaction.then(
    () => undefined,
    (err: unknown) => err,
  );
  await begun;
  await postgres.down('immediate');
  // The connection's error arrives on its socket: give it time to be emitted before the next statement.
  await new Promise((r) => setTimeout(r, 1_000));
  crashed();
  const err = await failure;
  expect(err).toBeDefined();
  expect(isStoreUnavailable(err)).toBe(true);

  await postgres.up();
  const { rows } = await sql<{ n: number }>`select 3 as n`.execute(store.db);
  expect(rows).toEqual([{ n: 3 }]);
});
