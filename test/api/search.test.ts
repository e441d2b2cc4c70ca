/**
 * Session and subscription search over HTTP (GET /v1/sessions, GET /v1/subscriptions) on the test
 * server's SQLite visibility: by reference, by status, by kind, by time range; paging through more than
 * one page with the opaque cursor; one entry per session although a refund reopened it (two runs) and
 * one per subscription although it continued as new after every charge; nothing but payment sessions;
 * every parameter validated by name. Visibility follows the workflows a moment later, so every search
 * is repeated until it shows what the sessions already are (bounded).
 */
import { PaysagaApiClient } from '../../client/http';
import { card, finished, FRICTIONLESS, ref, rub, useApiStack, type HttpResponse } from './api-stack';
import { TEST_CARD } from '../../sandbox/test-cards';

jest.setTimeout(120_000);

const s = useApiStack({ settings: { followMs: 1_000 } });

const DECLINED = TEST_CARD.visaDeclined;
const customer = { user_id: 'search-payer' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Calls `get` until `done` holds (visibility lags behind the workflows), at most `ms`. */
async function eventually<T>(what: string, get: () => Promise<T>, done: (v: T) => boolean, ms = 30_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await get();
    if (done(v)) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms; last: ${JSON.stringify(v)}`);
    await sleep(300);
  }
}

async function checkout(reference: string, pan = FRICTIONLESS, amount = 1_000) {
  const res = await s.call('POST', '/v1/checkouts?wait=0', {
    body: { method: 'card', reference, amount: rub(amount), card: card(pan), customer, allowRecurring: true },
  });
  expect(res.status).toBe(201);
  return res.body.sessionId as string;
}

/** Until the session's latest run has closed (followMs is 1 s here). */
async function closed(id: string): Promise<void> {
  const handle = s.stack.temporal.workflow.getHandle(id);
  await eventually(
    `${id} closes`,
    async () => (await handle.describe()).status.name,
    (st) => st !== 'RUNNING',
  );
}

/** Every page of a search, following `next`. */
async function allPages(query: Record<string, string>): Promise<{ pages: HttpResponse[]; ids: string[] }> {
  const pages: HttpResponse[] = [];
  let cursor: string | undefined;
  for (;;) {
    const qs = new URLSearchParams({ ...query, ...(cursor ? { cursor } : {}) });
    const res = await s.call('GET', `/v1/sessions?${qs}`);
    expect(res.status).toBe(200);
    pages.push(res);
    if (!res.body.hasMore) break;
    cursor = res.body.next;
    expect(typeof cursor).toBe('string');
  }
  return { pages, ids: pages.flatMap((p) => p.body.sessions.map((x: { sessionId: string }) => x.sessionId)) };
}

const fields = (res: HttpResponse) => (res.body.error?.fields ?? []).map((f: { field: string }) => f.field);

describe('GET /v1/sessions', () => {
  it('finds by reference, status, kind and time range; pages; one entry per session across runs', async () => {
    const from = new Date(Date.now() - 1).toISOString();
    const refs = [ref('srch-a'), ref('srch-b'), ref('srch-c'), ref('srch-d')];
    const paid: string[] = [];
    for (const r of refs.slice(0, 2)) paid.push(await checkout(r));
    // A boundary between the first two sessions and the others, by their own createdAt.
    const firstTwo = await Promise.all(paid.map((id) => finished(s, id)));
    await sleep(20);
    const between = new Date(Date.now()).toISOString();
    for (const r of refs.slice(2, 3)) paid.push(await checkout(r));
    const declined = await checkout(refs[3]!, DECLINED);
    const payout = await s.call('POST', '/v1/payouts?wait=0', {
      body: {
        reference: ref('srch-po'),
        amount: rub(700),
        destination: { type: 'card', card: { card_number: FRICTIONLESS } },
      },
    });
    expect(payout.status).toBe(201);
    const payoutId = payout.body.sessionId as string;
    const ours = [...paid, declined, payoutId];
    for (const id of ours) await finished(s, id);
    expect(firstTwo.every((v) => v.createdAt < between)).toBe(true);

    // A refund after the first session closed opens a second run of its workflow.
    await closed(paid[0]!);
    const refund = await s.call('POST', `/v1/sessions/${paid[0]}/refunds?wait=15000`, {
      body: { reference: ref('srch-r'), amount: 300 },
    });
    expect(refund.status).toBe(201);
    await eventually(
      'the refund succeeds',
      () => s.payments.sessions.get(paid[0]!),
      (v) => v.refunds[0]?.status === 'succeeded',
    );
    await closed(paid[0]!);
    const runs = [];
    for await (const run of s.stack.temporal.workflow.list({ query: `WorkflowId = '${paid[0]}'` }))
      runs.push(run);
    expect(runs.length).toBeGreaterThanOrEqual(2);

    // Everything of this test, by time range, two a page: more than one page, each session once.
    const everything = await eventually(
      'every session of the test is listed',
      () => allPages({ created_from: from, limit: '2' }),
      (r) => ours.every((id) => r.ids.includes(id)),
    );
    expect(everything.pages.length).toBeGreaterThan(1);
    expect(new Set(everything.ids).size).toBe(everything.ids.length);
    expect(everything.ids.filter((id) => ours.includes(id)).sort()).toEqual([...ours].sort());
    // Only payment sessions: no reference, outbox or other workflow of the stack.
    for (const id of everything.ids) expect(id).toMatch(/^ps_/);

    // By reference: the one session, its summary from search attributes and its links.
    const one = await s.call('GET', `/v1/sessions?reference=${refs[1]}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual({
      sessions: [
        {
          sessionId: paid[1],
          kind: 'card_checkout',
          reference: refs[1],
          phase: 'succeeded',
          amount: 1_000,
          currency: 'rub',
          createdAt: firstTwo[1]!.createdAt,
          needsAttention: false,
          links: {
            self: `/v1/sessions/${paid[1]}`,
            temporal: `http://127.0.0.1:8233/namespaces/default/workflows/${paid[1]}`,
          },
        },
      ],
      hasMore: false,
    });
    // The refunded session: once, as its latest run shows it.
    const reopened = await s.call('GET', `/v1/sessions?reference=${refs[0]}`);
    expect(reopened.body.sessions).toHaveLength(1);
    expect(reopened.body.sessions[0]).toMatchObject({ sessionId: paid[0], phase: 'succeeded' });

    // By status and by kind.
    const failed = await eventually(
      'the declined session by status',
      () => s.call('GET', `/v1/sessions?created_from=${encodeURIComponent(from)}&status=failed`),
      (r) => r.body.sessions?.length === 1,
    );
    expect(failed.body.sessions[0]).toMatchObject({ sessionId: declined, phase: 'failed' });
    const both = await s.call(
      'GET',
      `/v1/sessions?created_from=${encodeURIComponent(from)}&status=failed,succeeded&kind=payout`,
    );
    expect(both.body.sessions.map((x: { sessionId: string }) => x.sessionId)).toEqual([payoutId]);

    // By time range: created before `between` are the first two only.
    const early = await allPages({ created_from: from, created_to: between });
    expect(early.ids.sort()).toEqual(paid.slice(0, 2).sort());

    // The typed HTTP client pages the same way.
    const api = new PaysagaApiClient({ baseUrl: s.url, token: s.token });
    try {
      const seen: string[] = [];
      let page = await api.sessions.list({ created_from: from, kind: ['card_checkout'], limit: 2 });
      seen.push(...page.sessions.map((x) => x.sessionId));
      while (page.hasMore) {
        page = await api.sessions.list({
          created_from: from,
          kind: ['card_checkout'],
          limit: 2,
          cursor: page.next,
        });
        seen.push(...page.sessions.map((x) => x.sessionId));
      }
      expect(seen.sort()).toEqual([...paid, declined].sort());
    } finally {
      await api.close();
    }
  });

  it('refuses every bad parameter by name, and a cursor of another search; an empty range matches nothing', async () => {
    const cases: [string, string][] = [
      ['status=paid', 'status'],
      ['kind=card', 'kind'],
      ['kind=', 'kind'],
      ['reference=a', 'reference'],
      ['created_from=yesterday', 'created_from'],
      ['created_to=2025-01-31T12:00:00', 'created_to'],
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=two', 'limit'],
      ['cursor=not-a-cursor', 'cursor'],
      ['sort=created', 'sort'],
      // Empty is no value (a number read from nothing would be 0, no filter at all).
      ['amount_min=', 'amount_min'],
      ['amount_max=%20', 'amount_max'],
    ];
    for (const [qs, field] of cases) {
      const res = await s.call('GET', `/v1/sessions?${qs}`);
      expect([qs, res.status, res.body.error.code, fields(res)]).toEqual([
        qs,
        400,
        'invalid_request',
        [field],
      ]);
    }
    // A range that ends where or before it starts is empty: nothing matches, nothing is wrong.
    for (const qs of [
      'created_from=2025-02-01&created_to=2025-02-01',
      'created_from=2025-02-01&created_to=2025-01-01',
      'amount_min=500&amount_max=499',
      // A payer's id is matched exactly, white space too (the provider takes any non-empty user_id).
      'customer_id=%0A',
      'customer_id=%20',
    ]) {
      const res = await s.call('GET', `/v1/sessions?${qs}`);
      expect([qs, res.status, res.body.sessions, res.body.hasMore]).toEqual([qs, 200, [], false]);
    }
    const waitEmpty = await s.call('GET', '/v1/sessions/ps_1?wait=&after=');
    expect([waitEmpty.status, fields(waitEmpty)]).toEqual([400, ['wait', 'after']]);
    const sub = await s.call('GET', '/v1/subscriptions?status=succeeded');
    expect([sub.status, fields(sub)]).toEqual([400, ['status']]);

    // Two sessions so that a page of one has a next.
    await checkout(ref('srch-cur1'));
    await checkout(ref('srch-cur2'));
    const first = await eventually(
      'a page with a next',
      () => s.call('GET', '/v1/sessions?limit=1&kind=card_checkout'),
      (r) => r.body.hasMore === true,
    );
    const other = await s.call('GET', `/v1/sessions?limit=1&kind=payout&cursor=${first.body.next}`);
    expect([other.status, fields(other)]).toEqual([400, ['cursor']]);
    // The same filters with another limit go on.
    const next = await s.call('GET', `/v1/sessions?limit=5&kind=card_checkout&cursor=${first.body.next}`);
    expect(next.status).toBe(200);
    expect(next.body.sessions.map((x: { sessionId: string }) => x.sessionId)).not.toContain(
      first.body.sessions[0].sessionId,
    );
  });

  it('is in the OpenAPI document with its parameters', async () => {
    const doc = await s.call('GET', '/openapi.json');
    const op = doc.body.paths['/v1/sessions'].get;
    const names = op.parameters.map((p: { name: string }) => p.name).sort();
    expect(names).toEqual([
      'amount_max',
      'amount_min',
      'created_from',
      'created_to',
      'cursor',
      'customer_id',
      'kind',
      'limit',
      'needs_attention',
      'reference',
      'status',
    ]);
    expect(op.responses['200'].content['application/json'].schema.properties.sessions).toBeDefined();
    expect(doc.body.paths['/v1/subscriptions'].get).toBeDefined();
  });
});

describe('GET /v1/subscriptions', () => {
  it('one entry per subscription although it continues as new after every charge; its charges are sessions', async () => {
    const first = await checkout(ref('srch-tok'));
    const token = (await finished(s, first)).recurringToken as string;
    const reference = ref('srch-sub');
    const created = await s.call('POST', '/v1/subscriptions', {
      body: { reference, token, amount: rub(900), schedule: { interval: 'second' }, customer },
    });
    expect(created.status).toBe(201);
    const id = created.body.subscriptionId as string;
    await eventually(
      'three charges',
      () => s.payments.subscriptions.get(id),
      (v) => v.totals.succeeded >= 3,
      60_000,
    );
    await s.call('POST', `/v1/subscriptions/${id}/cancel`);
    const runs = [];
    for await (const run of s.stack.temporal.workflow.list({ query: `WorkflowId = '${id}'` })) runs.push(run);
    expect(runs.length).toBeGreaterThanOrEqual(3);

    const found = await eventually(
      'the canceled subscription',
      () => s.call('GET', `/v1/subscriptions?reference=${reference}`),
      (r) => r.body.subscriptions?.[0]?.status === 'canceled',
    );
    expect(found.body).toEqual({
      subscriptions: [
        {
          subscriptionId: id,
          reference,
          status: 'canceled',
          amount: 900,
          currency: 'rub',
          createdAt: created.body.createdAt,
          needsAttention: false,
          links: { self: `/v1/subscriptions/${id}`, temporal: expect.stringContaining(id) },
        },
      ],
      hasMore: false,
    });
    const active = await s.call('GET', `/v1/subscriptions?reference=${reference}&status=active,paused`);
    expect(active.body.subscriptions).toEqual([]);

    // Sessions never list the subscription itself; its charges are recurring payments.
    const view = await s.payments.subscriptions.get(id);
    const charges = view.charges.map((c) => c.sessionId).filter(Boolean); // a charge canceled before its session existed has none
    const sessions = await eventually(
      'the charges as sessions',
      () => s.payments.sessions.list({ kind: 'recurring_payment', limit: 100 }),
      (p) => charges.every((c) => p.sessions.some((x) => x.sessionId === c)),
    );
    expect(sessions.sessions.every((x) => x.kind === 'recurring_payment')).toBe(true);
    const all = await s.payments.sessions.list({ limit: 100 });
    expect(all.sessions.map((x) => x.sessionId)).not.toContain(id);
  });
});
