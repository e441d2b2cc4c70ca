/**
 * A subscription's record in the store (store/subscriptions.ts): forward only by version whatever order
 * the writes land in, its charges with the latest outcome, its billing periods (owed ones kept until paid
 * or written off, listed with their attempts), each event once and in sequence.
 */
import type { PaysagaEvent } from '../../common/events';
import {
  noSubscriptionTotals,
  type BillingPeriodView,
  type ChargeRecord,
  type SubscriptionView,
} from '../../common/views';
import { listEvents } from '../../store/events';
import {
  recordSubscription,
  searchSubscriptions,
  storedPeriods,
  storedSubscription,
} from '../../store/subscriptions';
import { BILLING_DEFAULTS, declineCodes } from '../../common/billing-policy';
import { searchSessions } from '../../store/sessions';
import { testStore, type TestStore } from '../helpers/store';

const id = 'sub-store-test';
const view = (over: Partial<SubscriptionView>): SubscriptionView => ({
  subscriptionId: id,
  reference: 'store-test',
  status: 'active',
  amount: { amount: 1_000, currency: 'RUB' },
  token: 'rt_1',
  schedule: { interval: 'month', count: 1, anchor: '2027-01-01T00:00:00Z', timeZone: 'UTC' },
  nextChargeAt: '2027-01-01T00:00:00.000Z',
  period: 1,
  periods: [],
  charges: [],
  totals: noSubscriptionTotals(),
  dunningPolicy: {
    retryDelaysMs: [],
    onExhausted: 'cancel',
    declineCodes: declineCodes(),
    otherDeclines: 'soft',
    unavailableRetryMs: BILLING_DEFAULTS.unavailableRetryMs,
  },
  policy: { owed: 'collect_with_next', catchUp: 'one', proration: 'none', spacingMs: 3_600_000 },
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
      kind: 'due' as const,
      sessionId: 'ps_1',
      reference: 'store-test:p1',
      amount: 1_000,
      currency: 'RUB',
      dueAt: '2027-01-01T00:00:00.000Z',
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
      totals: { ...view({}).totals, attempts: 1, succeeded: 1, chargedAmount: 1_000 },
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

  it('keeps every period: owed ones with their attempts until paid or written off, by status and page', async () => {
    const sub = 'sub-store-periods';
    const at = (d: number) => `2027-0${d}-01T00:00:00.000Z`;
    const period = (n: number, status: BillingPeriodView['status'], attempts: number): BillingPeriodView => ({
      period: n,
      dueAt: at(n),
      amount: 500,
      currency: 'rub',
      status,
      attempts,
      ...(status === 'owed' ? { owedSince: at(n + 1), declineClass: 'soft' as const } : {}),
    });
    const attempt = (p: number, a: number, outcome: 'failed' | 'succeeded', kind: ChargeRecord['kind']) => ({
      period: p,
      attempt: a,
      kind,
      sessionId: `ps_${p}_${a}`,
      reference: `store-periods:p${p}${a ? `:r${a}` : ''}`,
      amount: 500,
      currency: 'rub',
      dueAt: at(p),
      startedAt: at(p),
      outcome,
      finishedAt: at(p),
      ...(outcome === 'failed'
        ? {
            reason: { code: 'provider_error' as const, providerCode: 'insufficient_funds' },
            declineClass: 'soft' as const,
          }
        : {}),
    });
    const base = view({ subscriptionId: sub, reference: 'store-periods' });
    const owedCharges = [
      attempt(1, 0, 'failed', 'due'),
      attempt(1, 1, 'failed', 'retry'),
      attempt(2, 0, 'succeeded', 'due'),
    ];
    await recordSubscription(store, {
      view: { ...base, periods: [period(1, 'owed', 2), period(2, 'paid', 1)], charges: owedCharges },
      version: 1,
      events: [],
    });
    // Period 1 collected later; the workflow no longer carries period 2, the store keeps it.
    await recordSubscription(store, {
      view: {
        ...base,
        periods: [
          { ...period(1, 'owed', 3), status: 'paid', paidBy: 'ps_1_2', paidAt: at(3) },
          period(3, 'paid', 1),
        ],
        charges: [...owedCharges, attempt(1, 2, 'succeeded', 'collect'), attempt(3, 0, 'succeeded', 'due')],
      },
      version: 2,
      events: [],
    });
    const all = await storedPeriods(store, sub);
    expect(
      all.periods.map((p) => [p.period, p.status, p.attempts, p.charges.map((c) => [c.kind, c.outcome])]),
    ).toEqual([
      [
        1,
        'paid',
        3,
        [
          ['due', 'failed'],
          ['retry', 'failed'],
          ['collect', 'succeeded'],
        ],
      ],
      [2, 'paid', 1, [['due', 'succeeded']]],
      [3, 'paid', 1, [['due', 'succeeded']]],
    ]);
    // It says it was owed, and how its declines were classed.
    expect(all.periods[0]).toMatchObject({ owedSince: at(2), paidBy: 'ps_1_2', declineClass: 'soft' });
    expect(all.periods[0]!.charges[0]).toMatchObject({ reasonCode: 'provider_error', declineClass: 'soft' });
    // An older write changes nothing.
    await recordSubscription(store, {
      view: { ...base, periods: [period(1, 'owed', 2)], charges: owedCharges },
      version: 1,
      events: [],
    });
    expect((await storedPeriods(store, sub, { status: 'owed' })).periods).toEqual([]);
    const page = await storedPeriods(store, sub, { limit: 2 });
    expect([page.periods.map((p) => p.period), page.hasMore, page.next]).toEqual([[1, 2], true, 2]);
    const next = await storedPeriods(store, sub, { limit: 2, after: page.next });
    expect([next.periods.map((p) => p.period), next.hasMore]).toEqual([[3], false]);
  });
});
