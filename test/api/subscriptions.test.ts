/**
 * The subscription routes over HTTP: create (201, then 200 for the same Idempotency-Key), read,
 * pause / resume / change / cancel, 400 naming the field, 404 unknown, 409 wrong status, OpenAPI.
 */
import { card, finished, FRICTIONLESS, ref, rub, useApiStack } from './api-stack';

jest.setTimeout(60_000);

const s = useApiStack();

const customer = { user_id: 'api-subscriber' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function recurringToken(): Promise<string> {
  const res = await s.call('POST', '/v1/checkouts?wait=0', {
    body: {
      method: 'card',
      reference: ref('first'),
      amount: rub(100),
      card: card(FRICTIONLESS),
      customer,
      allowRecurring: true,
    },
  });
  expect(res.status).toBe(201);
  const paid = await finished(s, res.body.sessionId);
  expect(paid.phase).toBe('succeeded');
  return paid.recurringToken as string;
}

const fields = (res: { body: { error: { fields?: { field: string }[] } } }) =>
  (res.body.error.fields ?? []).map((f) => f.field);

describe('/v1/subscriptions', () => {
  it('create by Idempotency-Key: 201 then 200 for the same key; charges; pause, resume, change, cancel', async () => {
    const token = await recurringToken();
    const key = ref('sub');
    const body = { token, amount: rub(1_500), intervalMs: 1_500, customer };
    const created = await s.call('POST', '/v1/subscriptions', { idempotencyKey: key, body });
    expect(created.status).toBe(201);
    expect(created.headers.location).toBe(`/v1/subscriptions/sub-${key}`);
    expect(created.body).toMatchObject({
      subscriptionId: `sub-${key}`,
      reference: key,
      status: 'active',
      amount: { amount: 1_500, currency: 'rub' },
      links: { self: `/v1/subscriptions/sub-${key}` },
    });
    const id = created.body.subscriptionId as string;

    const again = await s.call('POST', '/v1/subscriptions', { idempotencyKey: key, body });
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.subscriptionId).toBe(id);

    // The first period is charged.
    let view = created.body;
    for (const deadline = Date.now() + 30_000; view.totals.succeeded < 1 && Date.now() < deadline;) {
      await sleep(250);
      view = (await s.call('GET', `/v1/subscriptions/${id}`)).body;
    }
    expect(view.totals.succeeded).toBeGreaterThanOrEqual(1);
    expect(view.charges[0]).toMatchObject({ period: 1, attempt: 0, outcome: 'succeeded', amount: 1_500 });
    const session = await s.call('GET', `/v1/sessions/${view.charges[0].sessionId}`);
    expect(session.status).toBe(200);
    expect(session.body).toMatchObject({ kind: 'recurring_payment', phase: 'succeeded' });

    const paused = await s.call('POST', `/v1/subscriptions/${id}/pause`);
    expect(paused.status).toBe(200);
    expect(paused.body.status).toBe('paused');
    const pausedAgain = await s.call('POST', `/v1/subscriptions/${id}/pause`);
    expect(pausedAgain.status).toBe(409);
    expect(pausedAgain.body.error.code).toBe('not_pauseable');

    const resumed = await s.call('POST', `/v1/subscriptions/${id}/resume`);
    expect(resumed.status).toBe(200);
    expect(resumed.body.status).toBe('active');

    const badChange = await s.call('POST', `/v1/subscriptions/${id}/change`, { body: { amount: 0 } });
    expect(badChange.status).toBe(400);
    expect(fields(badChange)).toEqual(['amount']);
    const emptyChange = await s.call('POST', `/v1/subscriptions/${id}/change`, { body: {} });
    expect(emptyChange.status).toBe(400);
    const changed = await s.call('POST', `/v1/subscriptions/${id}/change`, {
      body: { amount: 2_000, intervalMs: 2_000 },
    });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ amount: { amount: 2_000 }, intervalMs: 2_000 });

    const canceled = await s.call('POST', `/v1/subscriptions/${id}/cancel`, {
      body: { reason: 'customer asked' },
    });
    expect(canceled.status).toBe(200);
    expect(canceled.body).toMatchObject({
      status: 'canceled',
      canceledReason: { code: 'canceled_by_partner', detail: 'customer asked' },
    });
    await s.stack.temporal.workflow.getHandle(id).result();
    const afterCancel = await s.call('POST', `/v1/subscriptions/${id}/resume`);
    expect(afterCancel.status).toBe(409);
    const read = await s.call('GET', `/v1/subscriptions/${id}`);
    expect(read.status).toBe(200);
    expect(read.body.status).toBe('canceled');
  });

  it('a calendar schedule: each period charged once on its due date (ledger), then ended', async () => {
    const token = await recurringToken();
    const reference = ref('calendar');
    // Whole seconds, two seconds apart, from a moment ahead: due dates are counted from the anchor.
    const anchorMs = Math.ceil((Date.now() + 2_000) / 1_000) * 1_000;
    const anchor = new Date(anchorMs).toISOString();
    const created = await s.call('POST', '/v1/subscriptions', {
      body: {
        reference,
        token,
        amount: rub(700),
        schedule: { interval: 'second', count: 2, anchor },
        endAfterPeriods: 3,
        customer,
      },
    });
    expect(created.status).toBe(201);
    const due = [0, 2_000, 4_000].map((d) => new Date(anchorMs + d).toISOString());
    expect(created.body).toMatchObject({
      status: 'active',
      schedule: { interval: 'second', count: 2, anchor },
      nextDueDates: due,
      endAfterPeriods: 3,
    });
    expect(created.body.intervalMs).toBeUndefined();
    const id = created.body.subscriptionId as string;
    await s.stack.temporal.workflow.getHandle(id).result();
    const view = (await s.call('GET', `/v1/subscriptions/${id}`)).body;
    expect(view).toMatchObject({
      status: 'ended',
      totals: { succeeded: 3, chargedAmount: 2_100 },
      nextDueDates: [],
    });
    expect(view.charges.map((c: { dueAt: string }) => c.dueAt)).toEqual(due);
    for (const c of view.charges as { sessionId: string; startedAt: string; dueAt: string }[]) {
      expect(Date.parse(c.startedAt)).toBeGreaterThanOrEqual(Date.parse(c.dueAt));
      const { entries } = await s.stack.sandbox.ledger(c.sessionId);
      expect(entries.filter((e) => e.kind === 'capture' || e.kind === 'charge')).toHaveLength(1);
    }
    const refused = await s.call('POST', `/v1/subscriptions/${id}/resume`);
    expect(refused.status).toBe(409);
  });

  it('a schedule is checked field by field; intervalMs keeps working; nothing is started on a 400', async () => {
    const base = { token: 'rt_x', amount: rub(100), customer };
    const refusals: [Record<string, unknown>, string][] = [
      [{ schedule: { interval: 'fortnight' } }, 'schedule.interval'],
      [{ schedule: { interval: 'month', count: 25 } }, 'schedule.count'],
      [{ schedule: { interval: 'month', anchor: '2027-01-31T09:00:00' } }, 'schedule.anchor'],
      [{ schedule: { interval: 'month', timeZone: 'Mars/Olympus' } }, 'schedule.timeZone'],
      [{}, 'schedule'],
      [{ schedule: { interval: 'month' }, intervalMs: 60_000 }, 'intervalMs'],
      [{ schedule: { interval: 'month' }, firstChargeAt: Date.now() + 60_000 }, 'firstChargeAt'],
      [{ schedule: { interval: 'month' }, endAt: '2020-01-01T00:00:00Z' }, 'endAt'],
      [{ schedule: { interval: 'month' }, endAfterPeriods: 0 }, 'endAfterPeriods'],
    ];
    for (const [extra, field] of refusals) {
      const reference = ref('badsched');
      const res = await s.call('POST', '/v1/subscriptions', { body: { reference, ...base, ...extra } });
      expect({ extra, status: res.status, fields: fields(res) }).toEqual({
        extra,
        status: 400,
        fields: [field],
      });
      expect((await s.call('GET', `/v1/subscriptions/sub-${reference}`)).status).toBe(404);
    }
    // The older input: a fixed interval, still accepted (and shown as such).
    const legacy = await s.call('POST', '/v1/subscriptions', {
      body: {
        reference: ref('legacy'),
        ...base,
        intervalMs: 3_600_000,
        firstChargeAt: Date.now() + 3_600_000,
      },
    });
    expect(legacy.status).toBe(201);
    expect(legacy.body).toMatchObject({ intervalMs: 3_600_000 });
    expect(legacy.body.schedule).toBeUndefined();
    const id = legacy.body.subscriptionId as string;
    // A calendar change from period 2 turns it into a calendar subscription from then on.
    const zero = await s.call('POST', `/v1/subscriptions/${id}/change`, {
      body: { schedule: { interval: 'month' }, fromPeriod: 0 },
    });
    expect(zero.status).toBe(400);
    expect(fields(zero)).toEqual(['fromPeriod']);
    const changed = await s.call('POST', `/v1/subscriptions/${id}/change`, {
      body: { schedule: { interval: 'day', count: 2 }, fromPeriod: 2 },
    });
    expect(changed.status).toBe(200);
    expect(changed.body.pendingChanges).toEqual([
      { fromPeriod: 2, schedule: { interval: 'day', count: 2, anchor: changed.body.nextChargeAt } },
    ]);
    const notAnInterval = await s.call('POST', `/v1/subscriptions/${id}/change`, {
      body: { intervalMs: 60_000, schedule: { interval: 'day' } },
    });
    expect(notAnInterval.status).toBe(400);
    expect(fields(notAnInterval)).toEqual(['intervalMs']);
    await s.call('POST', `/v1/subscriptions/${id}/cancel`);
    // A calendar subscription takes no intervalMs: its state, so a conflict.
    const calendar = await s.call('POST', '/v1/subscriptions', {
      body: {
        reference: ref('cal'),
        ...base,
        schedule: { interval: 'month', anchor: '2030-01-31T09:00:00Z' },
      },
    });
    expect(calendar.status).toBe(201);
    const interval = await s.call('POST', `/v1/subscriptions/${calendar.body.subscriptionId}/change`, {
      body: { intervalMs: 60_000 },
    });
    expect(interval.status).toBe(409);
    expect(interval.body.error.code).toBe('calendar_schedule');
    await s.call('POST', `/v1/subscriptions/${calendar.body.subscriptionId}/cancel`);
  });

  it('400 names the field; nothing is started', async () => {
    const noCustomer = await s.call('POST', '/v1/subscriptions', {
      body: { reference: ref('bad'), token: 'rt_x', amount: rub(100), intervalMs: 1_500 },
    });
    expect(noCustomer.status).toBe(400);
    expect(fields(noCustomer)).toEqual(['customer']);

    const short = await s.call('POST', '/v1/subscriptions', {
      body: { reference: ref('bad'), token: 'rt_x', amount: rub(100), intervalMs: 10, customer },
    });
    expect(short.status).toBe(400);
    expect(fields(short)).toEqual(['intervalMs']);

    const noName = await s.call('POST', '/v1/subscriptions', {
      body: { token: 'rt_x', amount: rub(100), intervalMs: 1_500, customer },
    });
    expect(noName.status).toBe(400);
    expect(noName.body.error.fields).toEqual([
      { field: 'reference', rule: 'required: send a reference field or an Idempotency-Key header' },
    ]);

    const dunning = await s.call('POST', '/v1/subscriptions', {
      body: {
        reference: ref('bad'),
        token: 'rt_x',
        amount: rub(100),
        intervalMs: 1_500,
        customer,
        dunning: { onExhausted: 'explode' },
      },
    });
    expect(dunning.status).toBe(400);
    expect(fields(dunning)).toEqual(['dunning.onExhausted']);

    const reference = ref('never');
    const r = await s.call('POST', '/v1/subscriptions', {
      body: { reference, token: '', amount: rub(100), intervalMs: 1_500, customer },
    });
    expect(r.status).toBe(400);
    expect(fields(r)).toEqual(['token']);
    expect((await s.call('GET', `/v1/subscriptions/sub-${reference}`)).status).toBe(404);
  });

  it('404 for an unknown subscription on every route; 400 for an id that is not one', async () => {
    const id = `sub-${ref('unknown')}`;
    const get = await s.call('GET', `/v1/subscriptions/${id}`);
    expect(get.status).toBe(404);
    expect(get.body.error.code).toBe('session_not_found');
    for (const action of ['pause', 'resume', 'cancel']) {
      expect((await s.call('POST', `/v1/subscriptions/${id}/${action}`)).status).toBe(404);
    }
    expect((await s.call('POST', `/v1/subscriptions/${id}/change`, { body: { amount: 100 } })).status).toBe(
      404,
    );
    const notAnId = await s.call('GET', '/v1/subscriptions/ps_123');
    expect(notAnId.status).toBe(400);
    expect(fields(notAnId)).toEqual(['id']);
  });

  it('401 without the bearer token on every subscription route; nothing is started', async () => {
    const reference = ref('noauth');
    const body = { reference, token: 'rt_x', amount: rub(100), intervalMs: 1_500, customer };
    const id = `sub-${reference}`;
    for (const [method, path] of [
      ['POST', '/v1/subscriptions'],
      ['GET', `/v1/subscriptions/${id}`],
      ['POST', `/v1/subscriptions/${id}/pause`],
      ['POST', `/v1/subscriptions/${id}/resume`],
      ['POST', `/v1/subscriptions/${id}/cancel`],
      ['POST', `/v1/subscriptions/${id}/change`],
    ] as const) {
      const res = await s.call(method, path, { token: null, ...(method === 'POST' ? { body } : {}) });
      expect(res.status).toBe(401);
    }
    expect((await s.call('GET', `/v1/subscriptions/${id}`)).status).toBe(404);
  });

  it('is in the OpenAPI document', async () => {
    const doc = await s.call('GET', '/openapi.json');
    expect(doc.status).toBe(200);
    for (const path of [
      '/v1/subscriptions',
      '/v1/subscriptions/{id}',
      '/v1/subscriptions/{id}/pause',
      '/v1/subscriptions/{id}/resume',
      '/v1/subscriptions/{id}/cancel',
      '/v1/subscriptions/{id}/change',
    ]) {
      expect(doc.body.paths[path]).toBeDefined();
    }
    expect(doc.body.paths['/v1/subscriptions'].post.tags).toEqual(['subscriptions']);
    const create = doc.body.paths['/v1/subscriptions'].post;
    expect(create.security).toEqual([{ bearerAuth: [] }]);
    expect(create.responses['400'].content['application/json'].schema.$ref).toBe(
      '#/components/schemas/ApiError',
    );
    // The body is a named component (api/plugins/openapi.ts).
    expect(create.requestBody.content['application/json'].schema.$ref).toBe(
      '#/components/schemas/SubscriptionRequest',
    );
    expect(doc.body.components.schemas.SubscriptionRequest.properties.intervalMs).toBeDefined();
  });
});
