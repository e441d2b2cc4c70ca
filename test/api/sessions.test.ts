/**
 * Following and deciding sessions over HTTP: GET, approve / cancel through the workflow's Updates,
 * and refunds (idempotent by reference). Finalize is in finalize.test.ts (a holding project).
 */
import { finished, ref, startCheckout, useApiStack } from './api-stack';

jest.setTimeout(60_000);

const s = useApiStack();

const manual = { mode: 'manual', deadlineMs: 30_000 };
const start = (settings: Record<string, unknown> = {}, amount = 1_000) =>
  startCheckout(s, ref('sess'), settings, amount);

describe('GET /v1/sessions/{id}', () => {
  it('returns the session view with links', async () => {
    const { sessionId } = await start();
    const res = await s.call('GET', `/v1/sessions/${sessionId}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      sessionId,
      kind: 'card_checkout',
      links: { self: `/v1/sessions/${sessionId}` },
    });
    expect(Array.isArray(res.body.events)).toBe(true);
  });

  it('404 for an unknown session', async () => {
    const res = await s.call('GET', '/v1/sessions/ps_999999999');
    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({ code: 'session_not_found', retryable: false });
  });

  it('?wait long-polls: answers at the next change after `after`, or as it is when the wait runs out', async () => {
    const started = await start({ approval: manual });
    expect(started.phase).toBe('awaiting_approval');
    const { sessionId } = started;
    const now = await s.call('GET', `/v1/sessions/${sessionId}`);
    const version = now.body.version as number;
    // Nothing happens: the wait runs out and the same version comes back.
    const quiet = await s.call('GET', `/v1/sessions/${sessionId}?wait=300&after=${version}`);
    expect(quiet.status).toBe(200);
    expect(quiet.body).toMatchObject({ sessionId, version, phase: 'awaiting_approval' });
    // A change while the request waits: it answers with the changed session.
    const waiting = s.call('GET', `/v1/sessions/${sessionId}?wait=25000&after=${version}`);
    await s.call('POST', `/v1/sessions/${sessionId}/cancel`);
    const changed = await waiting;
    expect(changed.status).toBe(200);
    expect(changed.body.version).toBeGreaterThan(version);
    // `after` below the current version answers at once.
    const behind = await s.call('GET', `/v1/sessions/${sessionId}?wait=25000&after=0`);
    expect(behind.body.version).toBeGreaterThan(0);
    const ended = await finished(s, sessionId);
    expect(ended.phase).toBe('canceled');
    for (const bad of ['wait=25001', 'wait=-1', 'wait=soon', 'after=-2']) {
      const res = await s.call('GET', `/v1/sessions/${sessionId}?${bad}`);
      expect([bad, res.status, res.body.error.fields[0].field]).toEqual([bad, 400, bad.split('=')[0]]);
    }
  });

  it('400 for an id that cannot be a session id', async () => {
    const res = await s.call('GET', `/v1/sessions/${encodeURIComponent('ps 1')}`);
    expect(res.status).toBe(400);
    expect(res.body.error.fields[0].field).toBe('id');
  });
});

describe('decisions', () => {
  it('approve: a session awaiting approval goes on and succeeds', async () => {
    const started = await start({ approval: manual });
    expect(started.phase).toBe('awaiting_approval');
    const res = await s.call('POST', `/v1/sessions/${started.sessionId}/approve`);
    expect(res.status).toBe(200);
    expect(res.body.sessionId).toBe(started.sessionId);
    expect((await finished(s, started.sessionId)).phase).toBe('succeeded');
  });

  it('approve on a finished session: 409; on an unknown one: 404', async () => {
    const started = await start();
    await finished(s, started.sessionId);
    const res = await s.call('POST', `/v1/sessions/${started.sessionId}/approve`);
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('session_final');
    expect((await s.call('POST', '/v1/sessions/ps_999999998/approve')).status).toBe(404);
  });

  it('cancel with a reason: the session ends canceled, nothing charged', async () => {
    const started = await start({ approval: manual });
    const res = await s.call('POST', `/v1/sessions/${started.sessionId}/cancel`, {
      body: { reason: 'customer changed mind' },
    });
    expect(res.status).toBe(200);
    const result = await finished(s, started.sessionId);
    expect(result.phase).toBe('canceled');
    const ledger = await s.stack.sandbox.ledger(started.sessionId);
    expect(ledger.entries.filter((e) => e.kind === 'capture' || e.kind === 'charge')).toHaveLength(0);
  });

  it('cancel: 400 for a bad reason field', async () => {
    const started = await start({ approval: manual });
    const res = await s.call('POST', `/v1/sessions/${started.sessionId}/cancel`, { body: { reason: 42 } });
    expect(res.status).toBe(400);
    expect(res.body.error.fields[0].field).toBe('reason');
    await s.call('POST', `/v1/sessions/${started.sessionId}/cancel`);
  });
});

describe('POST /v1/sessions/{id}/refunds', () => {
  it('partial refund, the same key again returns the same refund (200), the rest by another key; more is 409', async () => {
    const started = await start({}, 2_000);
    const running = await s.call('POST', `/v1/sessions/${started.sessionId}/refunds`, {
      body: { amount: 100 },
      idempotencyKey: ref('early'),
    });
    // the payment may still be finishing: refused until it has finished
    if (running.status !== 201) expect(running.status).toBe(409);
    const paid = await finished(s, started.sessionId);
    expect(paid.phase).toBe('succeeded');
    const before = running.status === 201 ? 100 : 0;
    if (running.status === 201) await finished(s, started.sessionId);

    const key = ref('refund');
    const first = await s.call('POST', `/v1/sessions/${started.sessionId}/refunds?wait=10000`, {
      body: { amount: 500 },
      idempotencyKey: key,
    });
    expect(first.status).toBe(201);
    // The session is the payment; the refund is one of its operations, named by the key.
    expect(first.body).toMatchObject({
      sessionId: started.sessionId,
      kind: 'card_checkout',
    });
    expect(first.body.reference).not.toBe(key);
    expect(first.body.refunds).toContainEqual(expect.objectContaining({ reference: key, amount: 500 }));
    const again = await s.call('POST', `/v1/sessions/${started.sessionId}/refunds`, {
      body: { amount: 500 },
      idempotencyKey: key,
    });
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect((await finished(s, started.sessionId)).phase).toBe('succeeded');
    const afterDone = await s.call('POST', `/v1/sessions/${started.sessionId}/refunds`, {
      body: { reference: key, amount: 500 },
    });
    expect(afterDone.status).toBe(200);

    const tooMuch = await s.call('POST', `/v1/sessions/${started.sessionId}/refunds`, {
      body: { amount: 5_000 },
      idempotencyKey: ref('much'),
    });
    expect(tooMuch.status).toBe(409);
    expect(tooMuch.body.error).toMatchObject({
      code: 'exceeds_refundable',
      message: 'amount: at most 1400 is left to refund',
    });

    const rest = await s.call('POST', `/v1/sessions/${started.sessionId}/refunds?wait=10000`, {
      idempotencyKey: ref('rest'),
    });
    expect(rest.status).toBe(201);
    expect((await finished(s, started.sessionId)).phase).toBe('succeeded');
    const ledger = await s.stack.sandbox.ledger(started.sessionId);
    expect(ledger.totals.refund).toBe(2_000);
    expect(ledger.entries.filter((e) => e.kind === 'refund')).toHaveLength(before ? 3 : 2);
  });

  it('extraInfo reaches the provider with the refund; an oversized one is a 400 naming it', async () => {
    const started = await start();
    expect((await finished(s, started.sessionId)).phase).toBe('succeeded');
    const big = await s.call('POST', `/v1/sessions/${started.sessionId}/refunds`, {
      body: { reference: ref('big'), amount: 100, extraInfo: { note: 'x'.repeat(1_100) } },
    });
    expect(big.status).toBe(400);
    expect(big.body.error.fields).toEqual([
      { field: 'extraInfo', rule: expect.stringMatching(/1024 bytes/) },
    ]);
    const extraInfo = { ticket: 'support-7781', reason: 'damaged' };
    const refund = await s.call('POST', `/v1/sessions/${started.sessionId}/refunds?wait=10000`, {
      body: { reference: ref('noted'), amount: 300, extraInfo },
    });
    expect(refund.status).toBe(201);
    // The provider's own record of the refund carries it (transaction/state, as the session read it).
    const done = await finished(s, started.sessionId);
    const moneyback = done.lastSnapshot.payments[0].moneyback as { extra_info?: unknown }[];
    expect(moneyback.map((m) => m.extra_info)).toEqual([extraInfo]);
    expect((await s.stack.sandbox.ledger(started.sessionId)).totals.refund).toBe(300);
  });

  it('404 for an unknown session; 400 without a reference', async () => {
    expect(
      (await s.call('POST', '/v1/sessions/ps_999999997/refunds', { idempotencyKey: ref('x') })).status,
    ).toBe(404);
    const started = await start();
    const res = await s.call('POST', `/v1/sessions/${started.sessionId}/refunds`, { body: { amount: 1 } });
    expect(res.status).toBe(400);
    expect(res.body.error.fields[0].field).toBe('reference');
  });
});
