/**
 * Held payments (project with holds): the funds are frozen at finalization_pending, then finalized in
 * full or in part, or canceled, per the session's policy; each with webhooks on and off (polling only).
 */
import { AmountMinor } from '../../common/search-attributes';
import type { SessionView } from '../../common/views';
import { startStack, type TestStack } from '../helpers/stack';
import { card, references, rub, sessionHelpers } from '../helpers/workflow-test';

const ref = references('hold');

describe.each([true, false])('held payments (webhooks %s)', (webhooks) => {
  let stack: TestStack;
  beforeAll(async () => {
    // With the provider's commission reported (2 %), which follows the captured amount.
    stack = await startStack({ webhooks, hold: true, fees: { percent: 2 } });
  });
  afterAll(async () => {
    await stack?.close();
  });

  const { finished, moves } = sessionHelpers(() => stack);

  function start(
    name: string,
    amount: number,
    settings?: Parameters<TestStack['payments']['sessions']['startCardCheckout']>[0]['settings'],
    reference?: string,
  ): Promise<SessionView> {
    return stack.payments.sessions.startCardCheckout(
      {
        reference: ref(name),
        amount: rub(amount),
        card: card(),
        customer: { user_id: 'u1', ...(reference ? { customer: { reference } } : {}) },
        ...(settings ? { settings } : {}),
      },
      { waitMs: 15_000 },
    );
  }

  const manual = { finalization: { mode: 'manual' as const, deadlineMs: 30_000 } };

  it('auto: finalized in full, captured once', async () => {
    const started = await start('auto', 1_000);
    const result = await finished(started.sessionId);
    expect(result.phase).toBe('succeeded');
    expect(result.operations).toEqual([
      {
        id: expect.any(String),
        kind: 'payment',
        status: 'successful',
        amount: 1_000,
        currency: 'rub',
        fee: 20,
      },
    ]);
    expect(result.events.some((e) => e.type === 'finalize' && e.source === 'call')).toBe(true);
    expect(await moves(started.sessionId)).toEqual([
      ['hold', 1_000],
      ['capture', 1_000],
    ]);
  });

  it('auto_partial: captures the policy amount and releases the rest', async () => {
    const started = await start('partial', 1_000, { finalization: { mode: 'auto_partial', amount: 600 } });
    const result = await finished(started.sessionId);
    expect(result.phase).toBe('succeeded');
    expect(result.reason).toBeUndefined();
    expect(result.operations[0]?.fee).toBe(12);
    expect(await moves(started.sessionId)).toEqual([
      ['hold', 1_000],
      ['capture', 600],
      ['release', 400],
    ]);
  });

  it('manual: the finalize Update with a partial amount captures that amount', async () => {
    const started = await start('manual', 1_000, manual);
    expect(started.phase).toBe('awaiting_finalization');
    expect(await moves(started.sessionId)).toEqual([['hold', 1_000]]);
    const finalized = await stack.payments.sessions.finalize(started.sessionId, 300);
    expect(['processing', 'succeeded']).toContain(finalized.phase);
    const result = await finished(started.sessionId);
    expect(result.phase).toBe('succeeded');
    expect(await moves(started.sessionId)).toEqual([
      ['hold', 1_000],
      ['capture', 300],
      ['release', 700],
    ]);
    // The search attribute follows what was charged, so operators find the session by its real amount.
    const described = await stack.temporal.workflow.getHandle(started.sessionId).describe();
    expect(described.typedSearchAttributes.get(AmountMinor)).toBe(300);
  });

  it('manual: an over-amount finalize is refused synchronously and changes nothing', async () => {
    const started = await start('over', 1_000, manual);
    expect(started.phase).toBe('awaiting_finalization');
    await expect(stack.payments.sessions.finalize(started.sessionId, 1_001)).rejects.toMatchObject({
      name: 'SessionStateError',
      code: 'exceeds_held',
      message: 'amount: at most the held amount 1000',
    });
    await expect(stack.payments.sessions.finalize(started.sessionId, 0)).rejects.toMatchObject({
      name: 'InputValidationError',
      fields: [{ field: 'amount', rule: 'a positive integer (minor units)' }],
    });
    await expect(stack.payments.sessions.approve(started.sessionId)).rejects.toMatchObject({
      name: 'SessionStateError',
      code: 'approve_automatic',
    });
    const after = await stack.payments.sessions.get(started.sessionId);
    expect(after.phase).toBe('awaiting_finalization');
    expect(after.events.some((e) => e.source === 'decision')).toBe(false);
    expect((await stack.provider.state({ session_id: started.sessionId })).session_info.next_step).toBe(
      'finalize',
    );
    expect(await moves(started.sessionId)).toEqual([['hold', 1_000]]);
    // The held amount itself is fine.
    await stack.payments.sessions.finalize(started.sessionId, 1_000);
    expect((await finished(started.sessionId)).phase).toBe('succeeded');
    expect(await moves(started.sessionId)).toEqual([
      ['hold', 1_000],
      ['capture', 1_000],
    ]);
  });

  it('manual: the cancel Update at finalization releases the hold', async () => {
    const started = await start('cancel', 1_000, manual);
    expect(started.phase).toBe('awaiting_finalization');
    const canceled = await stack.payments.sessions.cancel(started.sessionId, 'customer left');
    expect(canceled.phase).toBe('canceled');
    const result = await finished(started.sessionId);
    expect(result.phase).toBe('canceled');
    expect(result.reason).toEqual({ code: 'canceled_by_partner', detail: 'customer left' });
    expect(await moves(started.sessionId)).toEqual([
      ['hold', 1_000],
      ['release', 1_000],
    ]);
    const truth = (await stack.provider.state({ session_id: started.sessionId })).session_info;
    expect(truth.transaction_status).toBe('canceled');
  });

  it('manual: no decision before the deadline cancels and releases the hold', async () => {
    const started = await start('deadline', 1_000, { finalization: { mode: 'manual', deadlineMs: 1_500 } });
    const result = await finished(started.sessionId);
    expect(result.phase).toBe('canceled');
    expect(result.reason).toEqual({ code: 'decision_deadline', detail: 'no finalize decision in time' });
    expect(await moves(started.sessionId)).toEqual([
      ['hold', 1_000],
      ['release', 1_000],
    ]);
  });

  it('loser: canceled at the charge of the held funds, released, nothing captured', async () => {
    const started = await start('loser', 1_000, undefined, 'loser');
    const result = await finished(started.sessionId);
    expect(result.phase).toBe('failed');
    expect(result.operations[0]).toMatchObject({ status: 'unsuccessful', error: 'insufficient_funds' });
    expect(await moves(started.sessionId)).toEqual([
      ['hold', 1_000],
      ['release', 1_000],
    ]);
  });
});
