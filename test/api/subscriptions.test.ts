/**
 * The subscription routes over HTTP: create (201, then 200 for the same Idempotency-Key), read, pause /
 * resume / change / cancel, the billing periods with their attempts, collect and write-off of what is
 * owed; one way to say when (a calendar schedule, its zone UTC unless named and said so, an anchor off
 * its zone's offset refused, at most two years ahead, seconds only in the provider's test environment);
 * 400 naming the field, 404 unknown, 409 wrong status, the OpenAPI document.
 */
import { InputValidationError } from '../../client/errors';
import { PaymentsClient } from '../../client/payments-client';
import type { StoredCharge, StoredPeriod, SubscriptionView } from '../../common/views';
import { card, finished, FRICTIONLESS, ref, rub, useApiStack } from './api-stack';

jest.setTimeout(90_000);

const s = useApiStack();

const customer = { user_id: 'api-subscriber' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const DAY = 86_400_000;

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

async function until(
  id: string,
  done: (v: SubscriptionView) => boolean,
  ms = 30_000,
): Promise<SubscriptionView> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = (await s.call('GET', `/v1/subscriptions/${id}`)).body as SubscriptionView;
    if (done(v)) return v;
    if (Date.now() > deadline) throw new Error(`${id}: ${JSON.stringify(v)}`);
    await sleep(250);
  }
}

describe('/v1/subscriptions', () => {
  it('create by Idempotency-Key: 201 then 200 for the same key; charges; pause, resume, change, cancel', async () => {
    const token = await recurringToken();
    const key = ref('sub');
    const body = { token, amount: rub(1_500), schedule: { interval: 'second', count: 2 }, customer };
    const created = await s.call('POST', '/v1/subscriptions', { idempotencyKey: key, body });
    expect(created.status).toBe(201);
    expect(created.headers.location).toBe(`/v1/subscriptions/sub-${key}`);
    expect(created.body).toMatchObject({
      subscriptionId: `sub-${key}`,
      reference: key,
      status: 'active',
      amount: { amount: 1_500, currency: 'rub' },
      // No zone was named: UTC, and the answer says so.
      schedule: { interval: 'second', count: 2, timeZone: 'UTC' },
      policy: { owed: 'collect_with_next', catchUp: 'one', proration: 'none' },
      dunningPolicy: { onExhausted: 'cancel', otherDeclines: 'soft' },
      links: { self: `/v1/subscriptions/sub-${key}` },
    });
    expect(created.body.dunningPolicy.declineCodes.hard).toContain('fraud_suspected');
    const id = created.body.subscriptionId as string;

    const again = await s.call('POST', '/v1/subscriptions', { idempotencyKey: key, body });
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.subscriptionId).toBe(id);

    // The first period is charged.
    const view = await until(id, (v) => v.totals.succeeded >= 1);
    expect(view.charges[0]).toMatchObject({ period: 1, attempt: 0, kind: 'due', outcome: 'succeeded' });
    const session = await s.call('GET', `/v1/sessions/${view.charges[0]!.sessionId}`);
    expect(session.status).toBe(200);
    expect(session.body).toMatchObject({ kind: 'recurring_payment', phase: 'succeeded' });

    const resumeAt = new Date(Date.now() + 60 * DAY).toISOString();
    const paused = await s.call('POST', `/v1/subscriptions/${id}/pause`, { body: { resumeAt } });
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({ status: 'paused', pausedUntil: resumeAt });
    const pausedAgain = await s.call('POST', `/v1/subscriptions/${id}/pause`);
    expect(pausedAgain.status).toBe(409);
    expect(pausedAgain.body.error.code).toBe('not_pauseable');

    const resumed = await s.call('POST', `/v1/subscriptions/${id}/resume`);
    expect(resumed.status).toBe(200);
    expect(resumed.body.status).toBe('active');
    expect(resumed.body.pausedUntil).toBeUndefined();

    const badChange = await s.call('POST', `/v1/subscriptions/${id}/change`, { body: { amount: 0 } });
    expect(badChange.status).toBe(400);
    expect(fields(badChange)).toEqual(['amount']);
    const emptyChange = await s.call('POST', `/v1/subscriptions/${id}/change`, { body: {} });
    expect(emptyChange.status).toBe(400);
    const changed = await s.call('POST', `/v1/subscriptions/${id}/change`, {
      body: { amount: 2_000, schedule: { interval: 'second', count: 3 }, proration: 'next_invoice' },
    });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({
      amount: { amount: 2_000 },
      schedule: { count: 3, timeZone: 'UTC' },
    });

    const atEnd = await s.call('POST', `/v1/subscriptions/${id}/cancel`, { body: { atPeriodEnd: true } });
    expect(atEnd.status).toBe(200);
    expect(atEnd.body).toMatchObject({
      status: 'active',
      cancelation: { atPeriodEnd: true },
      nextDueDates: [],
    });
    const canceled = await s.call('POST', `/v1/subscriptions/${id}/cancel`, {
      body: { reason: 'customer asked' },
    });
    expect(canceled.status).toBe(200);
    expect(canceled.body).toMatchObject({
      status: 'canceled',
      canceledReason: { code: 'canceled_by_partner', detail: 'customer asked' },
      cancelation: { atPeriodEnd: false },
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
      schedule: { interval: 'second', count: 2, anchor, timeZone: 'UTC' },
      nextDueDates: due,
      endAfterPeriods: 3,
    });
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
    // The store's periods: each paid, with its one attempt.
    const periods = await s.call('GET', `/v1/subscriptions/${id}/periods`);
    expect(periods.status).toBe(200);
    expect(
      periods.body.periods.map((p: StoredPeriod) => [
        p.period,
        p.status,
        p.dueAt,
        p.charges.length,
        p.charges[0]!.kind,
      ]),
    ).toEqual(due.map((d, i) => [i + 1, 'paid', d, 1, 'due']));
    expect(periods.body.hasMore).toBe(false);
    const refused = await s.call('POST', `/v1/subscriptions/${id}/resume`);
    expect(refused.status).toBe(409);
  });

  it('owed periods over HTTP: listed with their attempts, written off, collected; 409 naming why', async () => {
    const token = await recurringToken();
    const created = await s.call('POST', '/v1/subscriptions', {
      body: {
        reference: ref('owed'),
        token,
        amount: rub(800),
        schedule: { interval: 'second', count: 2 },
        endAfterPeriods: 2,
        // The sandbox's loser: every charge is declined for insufficient funds (soft).
        customer: { ...customer, customer: { reference: 'loser' } },
        dunning: { retryDelaysMs: [300], onExhausted: 'continue' },
        policy: { owed: 'leave_open', spacingMs: 200 },
      },
    });
    expect(created.status).toBe(201);
    const id = created.body.subscriptionId as string;
    const owed = await until(id, (v) => v.status === 'ended' && v.totals.owedPeriods === 2);
    expect(owed.totals).toMatchObject({ owedAmount: 1_600, failed: 4 });

    const listed = await s.call('GET', `/v1/subscriptions/${id}/periods?status=owed`);
    expect(listed.status).toBe(200);
    expect(
      listed.body.periods.map((p: StoredPeriod) => [
        p.period,
        p.status,
        p.attempts,
        p.charges.map((c: StoredCharge) => c.declineClass),
      ]),
    ).toEqual([
      [1, 'owed', 2, ['soft', 'soft']],
      [2, 'owed', 2, ['soft', 'soft']],
    ]);
    expect(listed.body.periods[0].charges[0]).toMatchObject({
      reasonCode: 'provider_error',
      outcome: 'failed',
    });
    const badQuery = await s.call('GET', `/v1/subscriptions/${id}/periods?status=lost`);
    expect(badQuery.status).toBe(400);
    expect(fields(badQuery)).toEqual(['status']);

    const writtenOff = await s.call('POST', `/v1/subscriptions/${id}/write-off`, {
      body: { periods: [1], reason: 'goodwill' },
    });
    expect(writtenOff.status).toBe(200);
    expect(writtenOff.body.totals).toMatchObject({
      owedPeriods: 1,
      writtenOffPeriods: 1,
      writtenOffAmount: 800,
    });
    const notOwed = await s.call('POST', `/v1/subscriptions/${id}/collect`, { body: { periods: [1] } });
    expect(notOwed.status).toBe(409);
    expect(notOwed.body.error.code).toBe('period_not_owed');
    const badBody = await s.call('POST', `/v1/subscriptions/${id}/collect`, { body: { periods: [0] } });
    expect(badBody.status).toBe(400);
    expect(fields(badBody)).toEqual(['periods.0']);

    // A payer who can pay, then collect: the owed period is charged once, and the subscription closes.
    const payer = await s.call('POST', `/v1/subscriptions/${id}/change`, { body: { customer } });
    expect(payer.status).toBe(200);
    const collecting = await s.call('POST', `/v1/subscriptions/${id}/collect`);
    expect(collecting.status).toBe(200);
    expect(collecting.body.collecting).toEqual([2]);
    await s.stack.temporal.workflow.getHandle(id).result();
    const all = (await s.call('GET', `/v1/subscriptions/${id}/periods?limit=1`)).body;
    expect(all).toMatchObject({ hasMore: true, next: 1 });
    expect(all.periods[0]).toMatchObject({ period: 1, status: 'written_off', writeOffReason: 'goodwill' });
    const rest = (await s.call('GET', `/v1/subscriptions/${id}/periods?after=1`)).body;
    expect(rest.periods[0]).toMatchObject({ period: 2, status: 'paid', attempts: 3 });
    expect(rest.periods[0].charges.map((c: StoredCharge) => [c.attempt, c.kind, c.outcome])).toEqual([
      [0, 'due', 'failed'],
      [1, 'retry', 'failed'],
      [2, 'collect', 'succeeded'],
    ]);
    const { entries } = await s.stack.sandbox.ledger(rest.periods[0].charges[2].sessionId);
    expect(entries.filter((e) => e.kind === 'capture' || e.kind === 'charge').map((e) => e.amount)).toEqual([
      800,
    ]);
    const closed = await s.call('POST', `/v1/subscriptions/${id}/write-off`);
    expect(closed.status).toBe(409);
  });

  it('one way to say when: a calendar schedule, field by field; nothing is started on a 400', async () => {
    const base = { token: 'rt_x', amount: rub(100), customer };
    const years = (n: number) => new Date(Date.now() + n * 366 * DAY).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const refusals: [Record<string, unknown>, string][] = [
      [{}, 'schedule'],
      // The millisecond form is no input at all: without a schedule, the schedule is what is missing.
      [{ intervalMs: 60_000 }, 'schedule'],
      [{ schedule: { interval: 'fortnight' } }, 'schedule.interval'],
      [{ schedule: { interval: 'month', count: 25 } }, 'schedule.count'],
      [{ schedule: { interval: 'month', anchor: '2027-01-31T09:00:00' } }, 'schedule.anchor'],
      [{ schedule: { interval: 'month', timeZone: 'Mars/Olympus' } }, 'schedule.timeZone'],
      // 09:00 -05:00 without a zone is not UTC; in July New York is -04:00.
      [{ schedule: { interval: 'month', anchor: '2027-01-31T09:00:00-05:00' } }, 'schedule.anchor'],
      [
        {
          schedule: { interval: 'month', anchor: '2027-07-31T09:00:00-05:00', timeZone: 'America/New_York' },
        },
        'schedule.anchor',
      ],
      [{ schedule: { interval: 'month', anchor: years(3) } }, 'schedule.anchor'],
      [{ schedule: { interval: 'month' }, trialEnd: years(3) }, 'trialEnd'],
      [{ schedule: { interval: 'month' }, endAt: '2020-01-01T00:00:00Z' }, 'endAt'],
      [{ schedule: { interval: 'month' }, endAfterPeriods: 0 }, 'endAfterPeriods'],
      [{ schedule: { interval: 'month' }, policy: { catchUp: 'burst' } }, 'policy.catchUp'],
      [{ schedule: { interval: 'month' }, dunning: { onExhausted: 'explode' } }, 'dunning.onExhausted'],
      [
        { schedule: { interval: 'month' }, dunning: { declineCodes: { hard: ['x'], soft: ['x'] } } },
        'dunning.declineCodes.soft.0',
      ],
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
    // A zone and an anchor that agree; the anchor within two years.
    const ok = await s.call('POST', '/v1/subscriptions', {
      body: {
        reference: ref('ny'),
        ...base,
        schedule: { interval: 'month', anchor: '2027-07-31T09:00:00-04:00', timeZone: 'America/New_York' },
      },
    });
    expect(ok.status).toBe(201);
    expect(ok.body.nextDueDates.slice(0, 2)).toEqual([
      '2027-07-31T13:00:00.000Z',
      '2027-08-31T13:00:00.000Z',
    ]);
    const id = ok.body.subscriptionId as string;
    const zero = await s.call('POST', `/v1/subscriptions/${id}/change`, {
      body: { schedule: { interval: 'month' }, fromPeriod: 0 },
    });
    expect(zero.status).toBe(400);
    expect(fields(zero)).toEqual(['fromPeriod']);
    // A change without an anchor keeps the billing day, time and zone.
    const later = await s.call('POST', `/v1/subscriptions/${id}/change`, {
      body: { schedule: { interval: 'month', count: 2 }, fromPeriod: 2 },
    });
    expect(later.status).toBe(200);
    expect(later.body.pendingChanges).toEqual([
      {
        fromPeriod: 2,
        schedule: {
          interval: 'month',
          count: 2,
          anchor: '2027-07-31T09:00:00-04:00',
          timeZone: 'America/New_York',
        },
      },
    ]);
    await s.call('POST', `/v1/subscriptions/${id}/cancel`);
  });

  it('periods under a day only with the provider test environment: refused by a production client, naming the field', async () => {
    const production = new PaymentsClient({
      temporal: s.stack.temporal,
      provider: s.stack.provider,
      taskQueue: s.stack.taskQueue,
      store: s.stack.store,
      providerEnvironment: 'production',
    });
    const reference = ref('prod');
    const start = (extra: Record<string, unknown>) =>
      production.subscriptions.start({
        reference,
        token: 'rt_x',
        amount: rub(100),
        customer,
        schedule: { interval: 'second', count: 5 },
        ...extra,
      });
    const refused = await start({}).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(InputValidationError);
    expect((refused as InputValidationError).fields.map((f) => f.field)).toEqual(['schedule.interval']);
    const retries = await start({ schedule: { interval: 'day' }, dunning: { retryDelaysMs: [1_000] } }).catch(
      (e: unknown) => e,
    );
    expect((retries as InputValidationError).fields.map((f) => f.field)).toEqual(['dunning.retryDelaysMs.0']);
    expect((await s.call('GET', `/v1/subscriptions/sub-${reference}`)).status).toBe(404);
  });

  it('404 for an unknown subscription on every route; 400 for an id that is not one', async () => {
    const id = `sub-${ref('unknown')}`;
    const get = await s.call('GET', `/v1/subscriptions/${id}`);
    expect(get.status).toBe(404);
    expect(get.body.error.code).toBe('session_not_found');
    expect((await s.call('GET', `/v1/subscriptions/${id}/periods`)).status).toBe(404);
    for (const action of ['pause', 'resume', 'cancel', 'collect', 'write-off']) {
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
    const body = { reference, token: 'rt_x', amount: rub(100), schedule: { interval: 'month' }, customer };
    const id = `sub-${reference}`;
    for (const [method, path] of [
      ['POST', '/v1/subscriptions'],
      ['GET', `/v1/subscriptions/${id}`],
      ['GET', `/v1/subscriptions/${id}/periods`],
      ['POST', `/v1/subscriptions/${id}/pause`],
      ['POST', `/v1/subscriptions/${id}/resume`],
      ['POST', `/v1/subscriptions/${id}/cancel`],
      ['POST', `/v1/subscriptions/${id}/change`],
      ['POST', `/v1/subscriptions/${id}/collect`],
      ['POST', `/v1/subscriptions/${id}/write-off`],
    ] as const) {
      const res = await s.call(method, path, { token: null, ...(method === 'POST' ? { body } : {}) });
      expect(res.status).toBe(401);
    }
    expect((await s.call('GET', `/v1/subscriptions/${id}`)).status).toBe(404);
  });

  it('is in the OpenAPI document: the routes, the calendar-only request, periods and policies', async () => {
    const doc = await s.call('GET', '/openapi.json');
    expect(doc.status).toBe(200);
    for (const path of [
      '/v1/subscriptions',
      '/v1/subscriptions/{id}',
      '/v1/subscriptions/{id}/periods',
      '/v1/subscriptions/{id}/pause',
      '/v1/subscriptions/{id}/resume',
      '/v1/subscriptions/{id}/cancel',
      '/v1/subscriptions/{id}/change',
      '/v1/subscriptions/{id}/collect',
      '/v1/subscriptions/{id}/write-off',
    ]) {
      expect(doc.body.paths[path]).toBeDefined();
    }
    expect(doc.body.paths['/v1/subscriptions'].post.tags).toEqual(['subscriptions']);
    const create = doc.body.paths['/v1/subscriptions'].post;
    expect(create.security).toEqual([{ bearerAuth: [] }]);
    expect(create.responses['400'].content['application/json'].schema.$ref).toBe(
      '#/components/schemas/ApiError',
    );
    expect(create.requestBody.content['application/json'].schema.$ref).toBe(
      '#/components/schemas/SubscriptionRequest',
    );
    const request = doc.body.components.schemas.SubscriptionRequest;
    expect(request.required).toEqual(expect.arrayContaining(['schedule', 'token', 'amount', 'customer']));
    expect(request.properties.intervalMs).toBeUndefined();
    expect(request.properties.firstChargeAt).toBeUndefined();
    expect(Object.keys(request.properties.policy.properties)).toEqual([
      'owed',
      'catchUp',
      'proration',
      'spacingMs',
    ]);
    const subscription = doc.body.components.schemas.Subscription;
    expect(subscription.required).toEqual(
      expect.arrayContaining(['schedule', 'periods', 'policy', 'dunningPolicy']),
    );
    expect(subscription.properties.intervalMs).toBeUndefined();
  });
});
