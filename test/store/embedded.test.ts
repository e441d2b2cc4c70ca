/**
 * The embedded store serves one PGlite session to many clients without mixing their requests: the
 * failure pglite-socket's multiplexer showed (another client's prepared statement, portal or rows) never
 * happens, transactions of one client are never seen half-done by another, and a client that dies in a
 * transaction leaves nothing behind.
 */
import pg from 'pg';
import { sql } from 'kysely';
import { migrateStore, migrateStoreTo, openStore } from '../../store/database';
import { MIGRATIONS } from '../../store/migrations';
import { testDatabaseUrl, testStore, uniqueSchema } from '../helpers/store';

jest.setTimeout(120_000);

describe('embedded store server', () => {
  const schema = uniqueSchema('mux');
  let admin: pg.Client;

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: testDatabaseUrl() });
    await admin.connect();
    await admin.query(`create schema ${schema}`);
    await admin.query(`create table ${schema}.t (id text primary key, v int not null)`);
  });
  afterAll(async () => {
    await admin.query(`drop schema ${schema} cascade`);
    await admin.end();
  });

  it('answers every client its own rows under concurrent parameterized queries and transactions', async () => {
    const pools = [0, 1, 2].map(() => new pg.Pool({ connectionString: testDatabaseUrl(), max: 4 }));
    const problems: string[] = [];
    let committed = 0;
    try {
      await Promise.all(
        pools.flatMap((pool, p) =>
          [0, 1, 2, 3].map(async (w) => {
            for (let i = 0; i < 60; i++) {
              const id = `p${p}-w${w}-${i}`;
              try {
                if (i % 3 === 0) {
                  const c = await pool.connect();
                  try {
                    await c.query('begin');
                    await c.query(`insert into ${schema}.t values ($1, $2)`, [id, i]);
                    const inside = await c.query(`select v from ${schema}.t where id = $1`, [id]);
                    if (inside.rows[0]?.v !== i) problems.push(`${id}: read ${JSON.stringify(inside.rows)}`);
                    if (i % 9 === 0) {
                      await c.query('select 1/0').catch(() => undefined); // an error inside the transaction
                      await c.query('rollback');
                    } else {
                      await c.query('commit');
                      committed++;
                    }
                  } finally {
                    c.release();
                  }
                } else {
                  await pool.query(`insert into ${schema}.t values ($1, $2)`, [id, i]);
                  committed++;
                  const r = await pool.query(`select id, v from ${schema}.t where id = $1 and v = $2`, [
                    id,
                    i,
                  ]);
                  if (r.rows[0]?.id !== id) problems.push(`${id}: read ${JSON.stringify(r.rows)}`);
                }
              } catch (err) {
                problems.push(`${id}: ${(err as Error).message}`);
              }
            }
          }),
        ),
      );
    } finally {
      await Promise.all(pools.map((pool) => pool.end()));
    }
    expect(problems).toEqual([]);
    const { rows } = await admin.query(`select count(*)::int as n from ${schema}.t`);
    expect(rows[0].n).toBe(committed);
  });

  it('rolls back the transaction of a client that went away, and goes on serving the others', async () => {
    const dying = new pg.Client({ connectionString: testDatabaseUrl() });
    await dying.connect();
    dying.on('error', () => undefined);
    await dying.query('begin');
    await dying.query(`insert into ${schema}.t values ('orphan', 1)`);
    // While it holds the session, another client waits; when it dies, the other goes on.
    const other = admin.query(`insert into ${schema}.t values ('after', 2) returning id`);
    (dying as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
    expect((await other).rows[0].id).toBe('after');
    const { rows } = await admin.query(
      `select id from ${schema}.t where id in ('orphan', 'after') order by id`,
    );
    expect(rows.map((r) => r.id)).toEqual(['after']);
  });

  it("keeps each client's named prepared statements its own, as PostgreSQL sessions do", async () => {
    // The same name, a different text per client, all at once: each client runs its own statement.
    const clients = await Promise.all(
      [0, 1, 2, 3].map(async () => {
        const c = new pg.Client({ connectionString: testDatabaseUrl() });
        await c.connect();
        return c;
      }),
    );
    try {
      const answers = await Promise.all(
        clients.map(async (c, k) => {
          const got: number[] = [];
          for (let i = 0; i < 20; i++) {
            const { rows } = await c.query({
              name: 'same_name',
              text: `select $1::int + ${k * 1000} as v`,
              values: [i],
            });
            got.push(rows[0].v);
          }
          return got;
        }),
      );
      answers.forEach((got, k) => expect(got).toEqual([...Array(20).keys()].map((i) => i + k * 1000)));
    } finally {
      await Promise.all(clients.map((c) => c.end()));
    }
  });

  it('deallocates what a client prepared when it goes away', async () => {
    const prepared = async () =>
      Number(
        (
          await admin.query(
            `select count(*) as n from pg_prepared_statements where statement like '%-- gone_soon%'`,
          )
        ).rows[0].n,
      );
    const client = new pg.Client({ connectionString: testDatabaseUrl() });
    await client.connect();
    await client.query({ name: 'gone_soon', text: 'select 1 as v -- gone_soon' });
    await client.query({ name: 'gone_soon_too', text: 'select 2 as v -- gone_soon' });
    // Seen from another client: the embedded store has one session (PostgreSQL shows a session its own).
    expect(await prepared()).toBe(2);
    await client.end();
    const deadline = Date.now() + 10_000;
    while ((await prepared()) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(await prepared()).toBe(0);
  });
});

describe('migrations', () => {
  it('apply from empty, and a second run changes nothing', async () => {
    const store = await testStore({ migrate: false });
    try {
      const first = await migrateStore(store);
      expect(first.results?.map((r) => [r.migrationName, r.status])).toEqual(
        Object.keys(MIGRATIONS).map((name) => [name, 'Success']),
      );
      const again = await migrateStore(store);
      expect(again.results).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('the first migration, rows written, then the rest: the rows are kept', async () => {
    const store = await testStore({ migrate: false });
    try {
      await migrateStoreTo(store, '0001-sessions');
      await store.db
        .insertInto('client_references')
        .values({
          reference: 'order-1',
          kind: 'card_checkout',
          fingerprint: 'f1',
          status: 'open',
          subject_id: 'ps_1',
        })
        .execute();
      const rest = await migrateStore(store);
      expect(rest.results?.map((r) => r.migrationName)).toEqual(Object.keys(MIGRATIONS).slice(1));
      const kept = await store.db.selectFrom('client_references').selectAll().execute();
      expect(kept.map((r) => [r.reference, r.subject_id])).toEqual([['order-1', 'ps_1']]);
      const counter = await store.db
        .selectFrom('counters')
        .select('value')
        .where('name', '=', 'events')
        .executeTakeFirst();
      expect(counter?.value).toBe(0);
    } finally {
      await store.close();
    }
  });

  it('two processes migrating at once apply each migration once', async () => {
    const schema = uniqueSchema('race');
    const a = openStore({ url: testDatabaseUrl(), schema, poolSize: 2 });
    const b = openStore({ url: testDatabaseUrl(), schema, poolSize: 2 });
    try {
      const [ra, rb] = await Promise.all([migrateStore(a), migrateStore(b)]);
      const applied = [...(ra.results ?? []), ...(rb.results ?? [])].map((r) => r.migrationName).sort();
      expect(applied).toEqual(Object.keys(MIGRATIONS));
      const tables = await sql<{
        n: number;
      }>`select count(*)::int as n from information_schema.tables where table_schema = ${schema}`.execute(
        a.db,
      );
      expect(tables.rows[0]?.n).toBeGreaterThanOrEqual(13);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
