/**
 * Search and feeds at any size: with 100,000 sessions and 100,000 events in the store, the
 * plan of every query the API sends (built by the same functions: sessionSearchQuery, eventListQuery)
 * reads an index, never the whole table. Each case prints its plan's scans.
 */
import { CompiledQuery, sql } from 'kysely';
import { eventListQuery, type EventQuery } from '../../store/events';
import { sessionSearchQuery, type SessionFilter } from '../../store/sessions';
import { testStore, type TestStore } from '../helpers/store';

jest.setTimeout(300_000);

const ROWS = 100_000;
let store: TestStore;

beforeAll(async () => {
  store = await testStore();
  const s = sql.id(store.schema);
  // Sessions over ~28 days, five phases, three kinds, 5,000 customers, one in 97 needing attention.
  await sql`
    insert into ${s}.sessions (id, kind, reference, phase, final, needs_attention, amount, currency,
                               customer_id, created_at, updated_at, version, state)
    select 'ps_' || g,
           (array['card_checkout', 'payout', 'fps_payment'])[g % 3 + 1],
           'ref-' || g,
           (array['succeeded', 'failed', 'awaiting_payer', 'processing', 'canceled'])[g % 5 + 1],
           g % 5 < 2, g % 97 = 0, 100 + (g * 7919) % 1000000, 'RUB', 'c' || (g % 5000),
           now() - make_interval(secs => g * 24), now(), 1, '{}'::jsonb
    from generate_series(1, ${ROWS}) g`.execute(store.db);
  // Events of 33,334 subjects, three each, in one global order.
  await sql`
    insert into ${s}.events (seq, id, subject, sequence, type, created_at, data)
    select g, 'evt_' || g, 'ps_' || (g / 3), g % 3 + 1,
           (array['session.created', 'session.awaiting_payer', 'session.succeeded'])[g % 3 + 1],
           now() - make_interval(secs => (${ROWS} - g) * 24), '{}'::jsonb
    from generate_series(1, ${ROWS}) g`.execute(store.db);
  await sql`analyze ${s}.sessions`.execute(store.db);
  await sql`analyze ${s}.events`.execute(store.db);
});
afterAll(async () => {
  await sql`drop schema ${sql.id(store.schema)} cascade`.execute(store.db);
  await store?.close();
});

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

/** Every scan of the plan: `Index Scan sessions_phase`, `Seq Scan sessions`, ... */
async function scans(query: { compile(): CompiledQuery }): Promise<string[]> {
  const compiled = query.compile();
  const result = await store.db.executeQuery<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
    CompiledQuery.raw(`explain (format json) ${compiled.sql}`, [...compiled.parameters]),
  );
  const out: string[] = [];
  const walk = (n: PlanNode) => {
    if (n['Node Type'].includes('Scan'))
      out.push(`${n['Node Type']} ${n['Index Name'] ?? n['Relation Name'] ?? ''}`.trim());
    for (const c of n.Plans ?? []) walk(c);
  };
  walk(result.rows[0]!['QUERY PLAN'][0].Plan);
  return out;
}

const DAY = 86_400_000;
const page = { limit: 51 };
const SESSION_CASES: [
  string,
  SessionFilter,
  { after?: { createdAt: Date; id: string }; limit: number },
  RegExp,
][] = [
  ['newest first, no filter', {}, page, /sessions_created/],
  ['by reference', { reference: 'ref-4242' }, page, /sessions_reference_key/],
  ['by status', { phases: ['awaiting_payer'] }, page, /sessions_(phase|created)/],
  ['by kind', { kinds: ['payout'] }, page, /sessions_(kind|created)/],
  [
    'created range',
    { createdFrom: new Date(Date.now() - 3 * DAY), createdTo: new Date(Date.now() - 2 * DAY) },
    page,
    /sessions_created/,
  ],
  ['amount range', { amountMin: 5_000, amountMax: 5_100 }, page, /sessions_amount/],
  ['needs attention', { needsAttention: true }, page, /sessions_attention/],
  ['customer id', { customerId: 'c77' }, page, /sessions_customer/],
  [
    'the next page (cursor)',
    { phases: ['failed'] },
    { after: { createdAt: new Date(Date.now() - 10 * DAY), id: 'ps_36000' }, limit: 51 },
    /sessions_(phase|created)/,
  ],
];

test.each(SESSION_CASES)('GET /v1/sessions %s reads an index', async (_name, filter, p, index) => {
  const plan = await scans(sessionSearchQuery(store, filter, p));
  console.log(`sessions ${_name}: ${plan.join(', ')}`);
  expect(plan.some((scan) => /Index/.test(scan) && index.test(scan))).toBe(true);
  expect(plan.filter((scan) => scan.startsWith('Seq Scan'))).toEqual([]);
});

const EVENT_CASES: [string, EventQuery, RegExp][] = [
  ['first page', { limit: 101 }, /events_pkey/],
  ['after a cursor (starting_after)', { after: 60_000, limit: 101 }, /events_pkey/],
  ['before a cursor (ending_before)', { before: 60_000, order: 'desc', limit: 101 }, /events_pkey/],
  ['one subject', { subject: 'ps_4242', limit: 101 }, /events_subject/],
  ['one type', { types: ['session.succeeded'], after: 90_000, limit: 101 }, /events_(type|pkey)/],
  ['created after a time', { createdFrom: new Date(Date.now() - DAY), limit: 101 }, /events_(created|pkey)/],
];

test.each(EVENT_CASES)('GET /v1/events %s reads an index', async (_name, q, index) => {
  const plan = await scans(eventListQuery(store.db, q));
  console.log(`events ${_name}: ${plan.join(', ')}`);
  expect(plan.some((scan) => /Index/.test(scan) && index.test(scan))).toBe(true);
  expect(plan.filter((scan) => scan.startsWith('Seq Scan'))).toEqual([]);
});
