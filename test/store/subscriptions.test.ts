/**
 * A subscription's record in the store (store/subscriptions.ts): forward only by version whatever order
 * the writes land in, its charges with the latest outcome, each event once and in sequence.
 */
import type { PaysagaEvent } from '../../common/events';
import type { SubscriptionView } from '../../common/views';
import { listEvents } from '../../store/events';
import { recordSubscription, searchSubscriptions, storedSubscription } from '../../store/subscriptions';
import { searchSessions } from '../../store/sessions';
import { testStore, type TestStore } from '../helpers/store';

const id = 'sub-store-test';
const view = (over: Partial<SubscriptionView>): SubscriptionView => ({
  subscriptionId: id,
  reference: 'store-test',
  status: 'active',
  amount: { amount: 1_000, currency: 'RUB' },
  token: 'rt_1',
  intervalMs: 60_000,
  nextChargeAt: '2027-01-01T00:00:00.000Z',
  period: 1,
  charges: [],
  totals: { attempts: 0, succeeded: 0, failed: 0, chargedAmount: 0 },
  dunningPolicy: { retryDelaysMs: [], onExhausted: 'cancel' },
  runs: 0,
  createdAt: '2026-11-25T00:00:00.000Z',
  ...over,
});
const event = (sequence: number, type: PaysagaEvent['type']): PaysagaEvent => ({
  id: `evt_${id}_${sequence}`,
  type,
  created: '2026-11-25T00:00:00.000Z',
  subscription_id: id,
  sequence,
  data: {},
});

describe('subscriptions in the store', () => {
  let store: TestStore;
  beforeAll(async () => {
    store = await testStore();
  });
  afterAll(async () => {
    await store?.close();
  });

  it('keeps the newest version, its charges and every event once, in sequence', async () => {
    const created = event(1, 'subscription.created');
    const charge = {
      period: 1,
      attempt: 0,
      sessionId: 'ps_1',
      amount: 1_000,
      currency: 'RUB',
      startedAt: '2026-11-25T00:01:00.000Z',
      outcome: 'pending' as const,
    };
    expect(await recordSubscription(store, { view: view({}), version: 1, events: [created] })).toEqual({
      applied: true,
      eventsAdded: 1,
    });
    const paid = view({
      period: 2,
      charges: [{ ...charge, outcome: 'succeeded', finishedAt: '2026-11-25T00:02:00.000Z' }],
      totals: { attempts: 1, succeeded: 1, failed: 0, chargedAmount: 1_000 },
    });
    // Version 3 lands before version 2, and carries 2's event (not confirmed yet) before its own.
    const charged = event(2, 'subscription.charged');
    const paused = event(3, 'subscription.paused');
    expect(
      await recordSubscription(store, {
        view: { ...paid, status: 'paused' },
        version: 3,
        customerId: 'u1',
        events: [charged, paused],
      }),
    ).toEqual({ applied: true, eventsAdded: 2 });
    expect(
      await recordSubscription(store, { view: view({ charges: [charge] }), version: 2, events: [charged] }),
    ).toEqual({ applied: false, eventsAdded: 0 });

    expect(await storedSubscription(store, id)).toEqual({ ...paid, status: 'paused' });
    const charges = await store.db.selectFrom('subscription_charges').selectAll().execute();
    expect(charges.map((c) => [c.period, c.attempt, c.session_id, c.outcome])).toEqual([
      [1, 0, 'ps_1', 'succeeded'],
    ]);
    const row = await store.db.selectFrom('subscriptions').selectAll().executeTakeFirstOrThrow();
    expect([row.status, Number(row.version), row.customer_id]).toEqual(['paused', 3, 'u1']);
    const events = await listEvents(store.db, { subject: id, limit: 10 });
    expect(events.map((e) => [e.sequence, e.type])).toEqual([
      [1, 'subscription.created'],
      [2, 'subscription.charged'],
      [3, 'subscription.paused'],
    ]);
    expect(await storedSubscription(store, 'sub-unknown')).toBeUndefined();
  });

  it('stores what PostgreSQL text cannot hold (U+0000) as U+FFFD instead of failing the write forever', async () => {
    const nul = 'sub-store-nul';
    const result = await recordSubscription(store, {
      view: view({
        subscriptionId: nul,
        reference: 'store-nul',
        token: 'rt_\u0000x',
        canceledReason: { code: 'canceled_by_partner', detail: 'a\u0000b' },
      }),
      version: 1,
      customerId: 'u\u0000',
      events: [
        {
          ...event(1, 'subscription.created'),
          id: `evt_${nul}_1`,
          subscription_id: nul,
          data: { 'k\u0000': 'v\u0000' },
        },
      ],
    });
    expect(result).toEqual({ applied: true, eventsAdded: 1 });
    expect(await storedSubscription(store, nul)).toMatchObject({
      token: 'rt_\uFFFDx',
      canceledReason: { code: 'canceled_by_partner', detail: 'a\uFFFDb' },
    });
    const [stored] = await listEvents(store.db, { subject: nul, limit: 1 });
    expect(stored?.data).toEqual({ 'k\uFFFD': 'v\uFFFD' });
    // A search parameter holding U+0000 (a caller's query string) is read as what it was stored as,
    // never a PostgreSQL error.
    const found = await searchSubscriptions(store, { reference: 'store-nul' }, { limit: 5 });
    expect(found.map((s) => s.subscriptionId)).toEqual([nul]);
    await expect(
      searchSessions(store, { customerId: 'u\u0000', reference: 'x\u0000' }, { limit: 5 }),
    ).resolves.toEqual([]);
    await expect(listEvents(store.db, { subject: `${nul}\u0000`, limit: 1 })).resolves.toEqual([]);
  });
});
