/**
 * Replaying a session's recorded provider webhooks (POST /v1/sessions/{id}/provider-events/replay and
 * `paysaga webhooks replay`) through the webhook routing: twice on a running session and once on a
 * closed one. Nothing changes (phase, operations, refunds, totals, the provider snapshot, and the
 * sandbox's ledger compared before and after); the audit trail records each replayed event as `replay`,
 * `duplicate` or `older`; a closed run that knew every state is left closed (no new run).
 */
import { Command } from 'commander';
import { replayWebhooks, register } from '../../cli/commands/webhooks';
import type { SessionView } from '../../common/views';
import { card, finished, FRICTIONLESS, ref, rub, useApiStack } from './api-stack';
import { until } from '../helpers/until';
import { sessionState } from '../../store/sessions';

jest.setTimeout(120_000);

const s = useApiStack();

/** What a replay must leave as it was. */
const state = (v: SessionView) => ({
  phase: v.phase,
  final: v.final,
  reason: v.reason,
  operations: v.operations,
  refunds: v.refunds,
  totals: v.totals,
  providerStatus: v.providerStatus,
  lastSnapshot: v.lastSnapshot,
});

/** A paid card session with a refund and a chargeback, each learned by webhook. */
async function paidRefundedChargedBack(followMs: number): Promise<string> {
  const res = await s.call('POST', '/v1/checkouts?wait=0', {
    body: {
      method: 'card',
      reference: ref('replay'),
      amount: rub(5_000),
      card: card(FRICTIONLESS),
      customer: { user_id: 'replay' },
      settings: { followMs },
    },
  });
  expect(res.status).toBe(201);
  const id = res.body.sessionId as string;
  expect((await finished(s, id)).phase).toBe('succeeded');
  const refund = await s.call('POST', `/v1/sessions/${id}/refunds?wait=15000`, {
    body: { reference: ref('replay-r'), amount: 1_000 },
  });
  expect(refund.status).toBe(201);
  expect(
    (
      await s.stack.sandbox.plain('POST', '/sandbox/chargebacks', {
        session_id: id,
        sum_info: { sum: 500, currency_code: 'rub' },
      })
    ).status,
  ).toBe(200);
  await until(
    'the refund and the chargeback on the session',
    () => s.payments.sessions.get(id),
    (v) => v.totals.refunded === 1_000 && v.totals.chargedBack === 500,
  );
  return id;
}

const audit = async (id: string) =>
  (await s.call('GET', `/v1/sessions/${id}/provider-events`)).body.events as {
    via: string;
    outcome: string;
    receivedAt: string;
  }[];

/**
 * The events the session received, once its record (what a replay replays) holds each of them: the
 * audit trail has an entry the moment an event is taken in, the record is written when the session
 * next comes to rest.
 */
const received = async (id: string) =>
  (
    await until(
      "the session's record holding every event it received",
      async () => ({
        received: (await audit(id)).filter((r) => r.via !== 'replay'),
        recorded: (await sessionState(s.stack.store, id))?.recorded.length,
      }),
      (x) => x.recorded === x.received.length,
    )
  ).received;

describe('webhook replay', () => {
  it('twice on a running session: nothing changes, each replayed event is recorded as a duplicate or older', async () => {
    const id = await paidRefundedChargedBack(120_000);
    const before = await s.payments.sessions.get(id);
    const ledger = await s.stack.sandbox.ledger(id);
    const recorded = await received(id);
    expect(recorded.filter((r) => r.via === 'webhook').length).toBeGreaterThanOrEqual(3);

    for (const round of [1, 2]) {
      const res = await s.call('POST', `/v1/sessions/${id}/provider-events/replay`);
      expect(res.status).toBe(200);
      expect(res.body.sessionId).toBe(id);
      expect(res.body.events).toHaveLength(recorded.length);
      for (const e of res.body.events) {
        expect(e.delivery).toBe('signaled');
        expect(['duplicate', 'older']).toContain(e.outcome);
      }
      const trail = await audit(id);
      const replays = trail.filter((r) => r.via === 'replay');
      expect(replays).toHaveLength(recorded.length * round);
      expect(replays.every((r) => r.outcome === 'duplicate' || r.outcome === 'older')).toBe(true);
      // The replayed records are those the answer names.
      for (const e of res.body.events)
        expect(replays.find((r) => r.receivedAt === e.replayedAt)?.outcome).toBe(e.outcome);
    }

    const after = await s.payments.sessions.get(id);
    expect(state(after)).toEqual(state(before));
    expect(await s.stack.sandbox.ledger(id)).toEqual(ledger);
  });

  it('on a closed session: already known, nothing is started; `paysaga webhooks replay` prints what each did', async () => {
    const id = await paidRefundedChargedBack(500);
    const handle = s.stack.temporal.workflow.getHandle(id);
    await until(
      'the run closes',
      async () => (await handle.describe()).status.name,
      (st) => st !== 'RUNNING',
    );
    const { runId } = await handle.describe();
    const before = await s.payments.sessions.get(id);
    const ledger = await s.stack.sandbox.ledger(id);

    const out: string[] = [];
    const err: string[] = [];
    const deps = { out: (l: string) => out.push(l), err: (l: string) => err.push(l), env: {} };
    const program = new Command().exitOverride();
    register(program, deps);
    await program.parseAsync(['webhooks', 'replay', '--session', id, '--api', s.url, '--token', s.token], {
      from: 'user',
    });
    expect(out.length).toBeGreaterThanOrEqual(3);
    for (const line of out) expect(line).toMatch(/ -> already_known$/);
    expect(err.at(-1)).toBe(`${out.length} replayed: ${out.length} already_known`);

    // Still the same closed run; the session as it was.
    expect((await handle.describe()).runId).toBe(runId);
    expect(state(await s.payments.sessions.get(id))).toEqual(state(before));
    expect(await s.stack.sandbox.ledger(id)).toEqual(ledger);

    // --json: the whole answer.
    const json: string[] = [];
    await replayWebhooks(
      { session: id, api: s.url, token: s.token, json: true },
      { out: (l) => json.push(l), err: () => undefined, env: {} },
    );
    expect(JSON.parse(json[0]!)).toMatchObject({ sessionId: id, events: expect.any(Array) });
  });

  it('an unknown session is a 404; a bad id a 400', async () => {
    const unknown = await s.call('POST', '/v1/sessions/ps_999999999/provider-events/replay');
    expect([unknown.status, unknown.body.error.code]).toEqual([404, 'session_not_found']);
    const bad = await s.call('POST', `/v1/sessions/${encodeURIComponent('ps 1')}/provider-events/replay`);
    expect(bad.status).toBe(400);
  });
});
