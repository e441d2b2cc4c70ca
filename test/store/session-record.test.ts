/**
 * The session's write (store/sessions.ts recordSession, one statement): the row only forward by version,
 * its operations only with the version that wrote them, audit entries and events each once with one
 * delivery per endpoint that wants the event's type, and the global order of events kept when writes
 * carrying the same events run at the same time (a workflow's writes overlap;
 * docs/decisions/015-paysaga-remembers.md).
 */
import { sql } from 'kysely';
import { DEFAULT_SETTINGS } from '../../common/settings';
import { newSessionState, type SessionState } from '../../common/session-input';
import type { PaysagaEvent } from '../../common/events';
import type { OperationView } from '../../common/views';
import { createEndpoint } from '../../store/endpoints';
import { deliveriesQueued } from '../../store/events';
import { deliveriesOf } from '../../store/deliveries';
import { providerEventsOf, recordSession, sessionState, type SessionRecord } from '../../store/sessions';
import { statementOf } from '../../store/prepared';
import { testStore, type TestStore } from '../helpers/store';

let store: TestStore;

beforeAll(async () => {
  store = await testStore();
  await createEndpoint(store, { id: 'we_all', url: 'http://127.0.0.1:9/all', events: null, keyId: 'k1' });
  await createEndpoint(store, {
    id: 'we_final',
    url: 'http://127.0.0.1:9/final',
    events: ['session.succeeded'],
    keyId: 'k1',
  });
});
afterAll(() => store.close());

const CREATED = '2026-11-01T10:00:00.000Z';

function stateOf(sessionId: string, version: number): SessionState {
  const request = { money: { amount: 1_500, currency: 'RUB' }, customerId: 'cust-1' };
  const identity = { sessionId, kind: 'card_checkout' as const, reference: `ref-${sessionId}`, request };
  return { ...newSessionState({ ...identity, settings: DEFAULT_SETTINGS }, CREATED), version };
}

function event(sessionId: string, sequence: number, type: PaysagaEvent['type']): PaysagaEvent {
  return {
    id: `evt_${sessionId}_${sequence}`,
    type,
    created: CREATED,
    sequence,
    session_id: sessionId,
    data: { sessionId },
  } as PaysagaEvent;
}

function record(
  state: SessionState,
  o: { phase?: string; operations?: OperationView[]; events?: PaysagaEvent[]; audit?: number[] } = {},
): SessionRecord {
  return {
    state,
    summary: {
      phase: o.phase ?? 'processing',
      final: false,
      needsAttention: false,
      amount: 1_500,
      currency: 'RUB',
      customerId: 'cust-1',
      createdAt: CREATED,
    },
    operations: o.operations ?? [],
    audit: (o.audit ?? []).map((seq) => ({
      seq,
      receivedAt: CREATED,
      type: 'payment',
      via: 'webhook',
      outcome: 'applied',
    })) as SessionRecord['audit'],
    events: o.events ?? [],
  };
}

const operation = (status: string): OperationView =>
  ({ id: 'pm_1', kind: 'payment', status, amount: 1_500, currency: 'rub' }) as OperationView;

async function eventRows(subject: string) {
  return store.db
    .selectFrom('events')
    .select(['seq', 'id', 'sequence'])
    .where('subject', '=', subject)
    .orderBy('seq')
    .execute();
}

test('a new session: row, operations, audit and events with their deliveries, in one write', async () => {
  const id = 'ps_rec_new';
  const result = await recordSession(
    store,
    record(stateOf(id, 1), {
      operations: [operation('processing')],
      audit: [1],
      events: [event(id, 1, 'session.created'), event(id, 2, 'session.succeeded')],
    }),
  );
  expect(result).toEqual({ applied: true, eventsAdded: 2 });
  expect((await sessionState(store, id))?.version).toBe(1);
  const row = await store.db
    .selectFrom('sessions')
    .selectAll()
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  expect(row).toMatchObject({ phase: 'processing', amount: 1500, customer_id: 'cust-1', version: 1 });
  const ops = await store.db.selectFrom('operations').selectAll().where('session_id', '=', id).execute();
  expect(ops.map((o) => [o.id, o.status])).toEqual([['pm_1', 'processing']]);
  expect((await providerEventsOf(store, id)).map((a) => a.seq)).toEqual([1]);
  const events = await eventRows(id);
  expect(events.map((e) => e.sequence)).toEqual([1, 2]);
  expect(Number(events[1]!.seq)).toBe(Number(events[0]!.seq) + 1);
  // created goes to the endpoint for every type; succeeded to both
  const created = await deliveriesOf(store, `evt_${id}_1`);
  const succeeded = await deliveriesOf(store, `evt_${id}_2`);
  expect(created.deliveries.map((d) => d.endpointId)).toEqual(['we_all']);
  expect(succeeded.deliveries.map((d) => d.endpointId).sort()).toEqual(['we_all', 'we_final']);
});

test('forward only: an older or equal version changes neither the row nor its operations; a repeat adds nothing', async () => {
  const id = 'ps_rec_forward';
  const events = [event(id, 1, 'session.created')];
  await recordSession(
    store,
    record(stateOf(id, 5), { phase: 'succeeded', operations: [operation('successful')], events }),
  );
  const older = await recordSession(
    store,
    record(stateOf(id, 4), {
      phase: 'processing',
      operations: [operation('processing')],
      events,
      audit: [1],
    }),
  );
  expect(older).toEqual({ applied: false, eventsAdded: 0 });
  const row = await store.db
    .selectFrom('sessions')
    .select(['phase', 'version'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  expect(row).toEqual({ phase: 'succeeded', version: 5 });
  const ops = await store.db.selectFrom('operations').select('status').where('session_id', '=', id).execute();
  expect(ops).toEqual([{ status: 'successful' }]);
  // the audit entry is the provider's word, kept whatever the version (once)
  await recordSession(store, record(stateOf(id, 4), { audit: [1] }));
  expect((await providerEventsOf(store, id)).map((a) => a.seq)).toEqual([1]);
  expect(await eventRows(id)).toHaveLength(1);
  expect((await deliveriesOf(store, `evt_${id}_1`)).deliveries).toHaveLength(1);
});

test('overlapping writes that carry the same events store each once, in order, with one delivery per endpoint', async () => {
  const id = 'ps_rec_overlap';
  const all = Array.from({ length: 6 }, (_, i) =>
    event(id, i + 1, i === 5 ? 'session.succeeded' : 'session.awaiting_payer'),
  );
  // each write carries every event not confirmed yet (workflows/session/recorder.ts): prefixes of `all`
  const writes = Array.from({ length: 6 }, (_, i) =>
    recordSession(store, record(stateOf(id, i + 1), { events: all.slice(0, i + 1) })),
  );
  const results = await Promise.all(writes);
  expect(results.reduce((n, r) => n + r.eventsAdded, 0)).toBe(6);
  const rows = await eventRows(id);
  expect(rows.map((r) => r.sequence)).toEqual([1, 2, 3, 4, 5, 6]);
  expect((await sessionState(store, id))?.version).toBe(6);
  for (const e of all) {
    const { deliveries } = await deliveriesOf(store, e.id);
    expect(deliveries).toHaveLength(e.type === 'session.succeeded' ? 2 : 1);
  }
});

test('the dispatcher is woken only by a write that queued deliveries, not by events no endpoint wants', async () => {
  const only = await testStore();
  try {
    await createEndpoint(only, {
      id: 'we_final',
      url: 'http://127.0.0.1:9/final',
      events: ['session.succeeded'],
      keyId: 'k1',
    });
    let woken = 0;
    const wake = () => void woken++;
    deliveriesQueued.on('queued', wake);
    try {
      const id = 'ps_rec_wake';
      await recordSession(only, record(stateOf(id, 1), { events: [event(id, 1, 'session.created')] }));
      expect(woken).toBe(0);
      const succeeded = record(stateOf(id, 2), {
        events: [event(id, 1, 'session.created'), event(id, 2, 'session.succeeded')],
      });
      await recordSession(only, succeeded);
      expect(woken).toBe(1);
      // a retried write adds no event and queues nothing
      await recordSession(only, succeeded);
      expect(woken).toBe(1);
      expect((await deliveriesOf(only, `evt_${id}_2`)).deliveries.map((d) => d.endpointId)).toEqual([
        'we_final',
      ]);
    } finally {
      deliveriesQueued.off('queued', wake);
    }
  } finally {
    await only.close();
  }
});

// The tests' store is embedded (test/global-setup.ts): its one session shows every connection's statements.
test('the write and the read of a session run as named prepared statements, each parsed once per connection', async () => {
  const id = 'ps_rec_prepared';
  const written = record(stateOf(id, 1), { events: [event(id, 1, 'session.created')] });
  // Several rounds of several at once, so the pool's connections each run both more than once.
  for (let round = 0; round < 3; round++)
    await Promise.all(
      [...Array(6).keys()].map(() => Promise.all([recordSession(store, written), sessionState(store, id)])),
    );
  const { rows } = await sql<{ statement: string; calls: number }>`
      select statement, (generic_plans + custom_plans)::int as calls from pg_prepared_statements
      where statement like ${`%${store.schema}%`}`.execute(store.db);
  for (const part of ['with session_row', 'select state from']) {
    const mine = rows.filter((r) => r.statement.startsWith('/* prepared */') && r.statement.includes(part));
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.length).toBeLessThan(18); // one per connection that ran it, not one per call
    expect(mine.reduce((n, r) => n + r.calls, 0)).toBeGreaterThanOrEqual(18);
  }
  expect(statementOf('select 1', []).name).toBeUndefined();
});
