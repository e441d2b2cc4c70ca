/**
 * The teardown's store scan (test/store-scan.ts) finds card data planted in any table of any schema,
 * names where, masks the number, and finds nothing once it is gone.
 */
import { sql } from 'kysely';
import { TEST_CARD } from '../../sandbox/test-cards';
import { scanStore } from '../store-scan';
import { testDatabaseUrl, testStore } from '../helpers/store';

jest.setTimeout(60_000);

test('a card number or card field in a row is found and named; nothing once removed', async () => {
  const store = await testStore();
  const s = sql.id(store.schema);
  try {
    await sql`insert into ${s}.provider_events (session_id, seq, received_at, type, via, outcome, detail)
              values ('ps_1', 1, now(), 'checkout_results', 'webhook', 'applied', ${`card ${TEST_CARD.visa}`})`.execute(
      store.db,
    );
    await sql`insert into ${s}.counters (name, value) values (${'{"card_code": 1}'}, 1)`.execute(store.db);
    const found = await scanStore(testDatabaseUrl());
    const mine = found.findings.filter((f) => f.startsWith(`${store.schema}.`));
    expect(mine).toEqual(
      expect.arrayContaining([
        `${store.schema}.provider_events: 1 row(s) hold ${TEST_CARD.visa.slice(0, 6)}…${TEST_CARD.visa.slice(-4)}`,
        `${store.schema}.counters: 1 row(s) hold "card_code":`,
      ]),
    );
    expect(mine.join('\n')).not.toContain(TEST_CARD.visa);
  } finally {
    await sql`drop schema ${s} cascade`.execute(store.db);
    await store.close();
  }
  const after = await scanStore(testDatabaseUrl());
  expect(after.findings.filter((f) => f.startsWith(`${store.schema}.`))).toEqual([]);
});
