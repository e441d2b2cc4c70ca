/**
 * POST /v1/sessions/{id}/finalize over HTTP: the sandbox project holds card payments, so a session
 * with manual finalization stops at awaiting_finalization until the partner decides.
 */
import { finished, ref, startCheckout, useApiStack } from './api-stack';

jest.setTimeout(60_000);

const s = useApiStack({ hold: true });

const manual = { mode: 'manual', deadlineMs: 30_000 };
const start = (settings: Record<string, unknown>, amount: number) =>
  startCheckout(s, ref('hold'), settings, amount);

describe('POST /v1/sessions/{id}/finalize', () => {
  it('finalize: partial amount of a held payment; above the held amount is refused (409), a bad amount is 400', async () => {
    const started = await start({ finalization: manual }, 5_000);
    expect(started.phase).toBe('awaiting_finalization');
    const bad = await s.call('POST', `/v1/sessions/${started.sessionId}/finalize`, {
      body: { amount: 'all' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.fields[0].field).toBe('amount');
    const above = await s.call('POST', `/v1/sessions/${started.sessionId}/finalize`, {
      body: { amount: 9_000 },
    });
    expect(above.status).toBe(409);
    expect(above.body.error).toMatchObject({
      code: 'exceeds_held',
      message: 'amount: at most the held amount 5000',
    });
    const res = await s.call('POST', `/v1/sessions/${started.sessionId}/finalize`, {
      body: { amount: 3_000 },
    });
    expect(res.status).toBe(200);
    expect((await finished(s, started.sessionId)).phase).toBe('succeeded');
    const ledger = await s.stack.sandbox.ledger(started.sessionId);
    expect(ledger.totals.capture).toBe(3_000);
  });

  it('cancel of a held payment releases it', async () => {
    const started = await start({ finalization: manual }, 2_000);
    expect(started.phase).toBe('awaiting_finalization');
    const res = await s.call('POST', `/v1/sessions/${started.sessionId}/cancel`, { body: {} });
    expect(res.status).toBe(200);
    expect((await finished(s, started.sessionId)).phase).toBe('canceled');
    const ledger = await s.stack.sandbox.ledger(started.sessionId);
    expect(ledger.totals.capture).toBe(0);
  });
});
