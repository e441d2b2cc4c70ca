/**
 * Several payouts in one session, end to end through the API, the worker and the sandbox: a batch sent
 * one payout at a time, each with its own decision and result; a payout added to a session by its
 * reference (twice: once); events that name the payout they concern; the ledger as the judge.
 */
import { until } from '../helpers/until';
import { finished, FRICTIONLESS, ref, rub, useApiStack, workflowsFor } from './api-stack';

jest.setTimeout(120_000);

const s = useApiStack();

const BANK = '100000000111';
const fps = { type: 'fps_account', phone: '+79001234567', bankId: BANK };
const manual = { approval: { mode: 'manual', deadlineMs: 60_000 } };

type Payout = {
  reference: string;
  status: string;
  amount: number;
  reason?: { code: string; detail?: string; providerCode?: string };
  payoutId?: string;
};
const read = async (id: string) => (await s.call('GET', `/v1/sessions/${id}`)).body;
const payoutsOf = (v: { payouts: Payout[] }) => v.payouts.map((p) => [p.reference, p.status]);

/** Waits until payout `reference` of the session waits for the partner's approval. */
const awaitingApproval = (id: string, reference: string) =>
  until(
    `payout ${reference} awaits approval`,
    () => read(id),
    (v) =>
      v.phase === 'awaiting_approval' &&
      v.payouts.find((p: Payout) => p.reference === reference)?.status === 'awaiting_approval',
  );

describe('several payouts in one session', () => {
  it('a batch of three: canceled by the partner, failed for loser, succeeded; each its own result; the ledger pays one', async () => {
    const reference = ref('batch');
    const [a, b, c] = [`${reference}-a`, `${reference}-b`, `${reference}-c`];
    const res = await s.call('POST', '/v1/payouts?wait=15000', {
      body: {
        reference,
        settings: manual,
        payouts: [
          { reference: a, amount: rub(100), destination: fps },
          {
            reference: b,
            amount: rub(200),
            destination: fps,
            customer: { customer: { reference: 'loser' } },
          },
          { reference: c, amount: rub(300), destination: fps },
        ],
      },
    });
    expect(res.status).toBe(201);
    const id = res.body.sessionId as string;
    expect(res.body.kind).toBe('payout');
    expect(res.body.money).toEqual({ amount: 600, currency: 'rub' });

    await awaitingApproval(id, a);
    expect(payoutsOf(await read(id))).toEqual([
      [a, 'awaiting_approval'],
      [b, 'queued'],
      [c, 'queued'],
    ]);
    const canceled = await s.call('POST', `/v1/sessions/${id}/cancel`, {
      body: { reason: 'wrong account', payout: a },
    });
    expect(canceled.status).toBe(200);
    expect(canceled.body.final).toBe(false);

    await awaitingApproval(id, b);
    // A decision that names a payout is for that payout only: one meant for another is refused.
    const stale = await s.call('POST', `/v1/sessions/${id}/approve`, { body: { payout: a } });
    expect(stale.status).toBe(409);
    expect(stale.body.error.code).toBe('payout_not_waiting');
    expect(stale.body.error.message).toBe(`payout ${a} does not wait for a decision (payout ${b} does)`);
    expect((await s.call('POST', `/v1/sessions/${id}/approve`, { body: { payout: b } })).status).toBe(200);
    await awaitingApproval(id, c);
    expect((await s.call('POST', `/v1/sessions/${id}/approve`)).status).toBe(200);

    const done = await finished(s, id);
    expect(done.phase).toBe('succeeded');
    expect(done.payouts.map((p: Payout) => [p.reference, p.status, p.amount, p.reason])).toEqual([
      [a, 'canceled', 100, { code: 'canceled_by_partner', detail: 'wrong account' }],
      [b, 'failed', 200, { code: 'provider_error', providerCode: 'payout_declined' }],
      [c, 'succeeded', 300, undefined],
    ]);
    expect(new Set(done.payouts.map((p: Payout) => p.payoutId)).size).toBe(3);
    expect(done.totals.paidOut).toBe(300);
    const ledger = await s.stack.sandbox.ledger(id);
    expect(ledger.entries.map((e) => [e.kind, e.amount])).toEqual([['payout', 300]]);

    // Events name the payout they concern; the session's own result comes after every payout's.
    type Event = { type: string; data: { operation?: Payout } };
    const events = await until(
      'the session.succeeded event',
      async (): Promise<Event[]> =>
        (await s.call('GET', `/v1/events?session_id=${id}&limit=100`)).body.events,
      (es) => es.some((e) => e.type === 'session.succeeded'),
    );
    const named = events.flatMap((e) => (e.data.operation ? [[e.type, e.data.operation.reference]] : []));
    expect(named).toEqual([
      ['session.awaiting_approval', a],
      ['session.payout_canceled', a],
      ['session.awaiting_approval', b],
      ['session.payout_failed', b],
      ['session.awaiting_approval', c],
      ['session.payout_succeeded', c],
    ]);
    expect(events.at(-1)?.type).toBe('session.succeeded');
  });

  it('a payout added to a session by its reference, twice: added once, paid once', async () => {
    const reference = ref('added');
    const first = await s.call('POST', '/v1/payouts?wait=15000', {
      body: { reference, settings: manual, amount: rub(500), destination: fps },
    });
    expect(first.status).toBe(201);
    const id = first.body.sessionId as string;
    await awaitingApproval(id, reference);

    const extra = { reference: `${reference}-2`, amount: rub(250), destination: fps };
    const added = await s.call('POST', `/v1/sessions/${id}/payouts`, { body: extra });
    expect(added.status).toBe(201);
    expect(payoutsOf(added.body)).toEqual([
      [reference, 'awaiting_approval'],
      [extra.reference, 'queued'],
    ]);
    expect(added.body.money).toEqual({ amount: 750, currency: 'rub' });
    const again = await s.call('POST', `/v1/sessions/${id}/payouts`, { body: extra });
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.payouts).toHaveLength(2);

    // The same reference for another payout; another currency; the session's own reference.
    const conflict = await s.call('POST', `/v1/sessions/${id}/payouts`, {
      body: { ...extra, amount: rub(251) },
    });
    expect(conflict.status).toBe(409);
    const currency = await s.call('POST', `/v1/sessions/${id}/payouts`, {
      body: { ...extra, reference: `${reference}-3`, amount: { amount: 10, currency: 'usd' } },
    });
    expect(currency.status).toBe(409);
    expect(currency.body.error).toMatchObject({
      code: 'currency_mismatch',
      message: "amount.currency: the session's currency (rub)",
    });
    const card = await s.call('POST', `/v1/sessions/${id}/payouts`, {
      body: {
        ...extra,
        reference: `${reference}-4`,
        destination: { type: 'card', card: { card_number: FRICTIONLESS } },
      },
    });
    expect(card.status).toBe(400);
    expect(card.text).not.toContain(FRICTIONLESS);

    expect((await s.call('POST', `/v1/sessions/${id}/approve`)).status).toBe(200);
    await awaitingApproval(id, extra.reference);
    expect((await s.call('POST', `/v1/sessions/${id}/approve`)).status).toBe(200);
    const done = await finished(s, id);
    expect(done.phase).toBe('succeeded');
    expect(payoutsOf(done)).toEqual([
      [reference, 'succeeded'],
      [extra.reference, 'succeeded'],
    ]);
    const ledger = await s.stack.sandbox.ledger(id);
    expect(ledger.entries.map((e) => [e.kind, e.amount])).toEqual([
      ['payout', 500],
      ['payout', 250],
    ]);

    // A session that has ended takes no payout; a session of another kind takes none either.
    const late = await s.call('POST', `/v1/sessions/${id}/payouts`, {
      body: { ...extra, reference: `${reference}-5` },
    });
    expect(late.status).toBe(409);
    expect(late.body.error.code).toBe('session_final');
  });

  it('400 naming the field for a bad batch, nothing started', async () => {
    const reference = ref('bad-batch');
    const res = await s.call('POST', '/v1/payouts', {
      body: {
        reference,
        payouts: [
          { reference: 'same-ref', amount: rub(100), destination: fps },
          { reference: 'same-ref', amount: { amount: 100, currency: 'usd' }, destination: fps },
        ],
      },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.fields).toEqual([
      { field: 'payouts.1.reference', rule: 'unique in the batch' },
      { field: 'payouts.1.amount.currency', rule: "the batch's one currency (rub)" },
    ]);
    expect(await workflowsFor(s, reference)).toBe(0);
  });
});
