import { completeThreeDs } from '../helpers/payer';
import { startStack, type TestStack } from '../helpers/stack';
import { FRICTIONLESS, card, references, rub, sessionHelpers } from '../helpers/workflow-test';

const ref = references();

describe.each([true, false])('card checkout (webhooks %s)', (webhooks) => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ webhooks });
  });
  afterAll(async () => {
    await stack?.close();
  });

  const { finished, startThreeDs } = sessionHelpers(() => stack);

  it('charges a frictionless card once, approved automatically', async () => {
    const started = await stack.payments.sessions.startCardCheckout({
      reference: ref('card'),
      amount: rub(10_000),
      card: card(FRICTIONLESS),
      customer: { user_id: 'u1' },
    });
    expect(started.sessionId).toMatch(/^ps_/);
    const result = await finished(started.sessionId);
    expect(result.phase).toBe('succeeded');
    expect(result.operations[0]).toMatchObject({
      kind: 'payment',
      status: 'successful',
      amount: 10_000,
      currency: 'rub',
    });
    const ledger = await stack.sandbox.ledger(started.sessionId);
    expect(ledger.entries.filter((e) => e.kind === 'capture' || e.kind === 'charge')).toHaveLength(1);
  });

  it('a repeated start with the same reference returns the same session and charges once', async () => {
    const reference = ref('same');
    const a = await stack.payments.sessions.startCardCheckout({
      reference,
      amount: rub(500),
      card: card(FRICTIONLESS),
      customer: { user_id: 'u1' },
    });
    const b = await stack.payments.sessions.startCardCheckout({
      reference,
      amount: rub(500),
      card: card(FRICTIONLESS),
      customer: { user_id: 'u1' },
    });
    expect(b.sessionId).toBe(a.sessionId);
    await finished(a.sessionId);
    const c = await stack.payments.sessions.startCardCheckout({
      reference,
      amount: rub(500),
      card: card(FRICTIONLESS),
      customer: { user_id: 'u1' },
    });
    expect(c.sessionId).toBe(a.sessionId);
    expect(c.phase).toBe('succeeded');
    const ledger = await stack.sandbox.ledger(a.sessionId);
    expect(ledger.entries.filter((e) => e.kind === 'capture' || e.kind === 'charge')).toHaveLength(1);
  });

  it('3-D Secure: surfaces the redirect early, the right code succeeds after the payer returns', async () => {
    const started = await startThreeDs(ref('3ds'));
    expect(started.phase).toBe('awaiting_payer');
    expect(started.userAction?.destination_info?.url_address).toContain('/sandbox/3ds/');
    const back = await completeThreeDs(started.userAction, '12345');
    expect(back.html + (back.location ?? '')).toContain('https://shop.example/return');
    await stack.payments.sessions.notifyPayerReturned(started.sessionId);
    const result = await finished(started.sessionId);
    expect(result.phase).toBe('succeeded');
  });

  it('3-D Secure: a wrong code fails the payment, nothing charged', async () => {
    const started = await startThreeDs(ref('3ds-bad'));
    await completeThreeDs(started.userAction, '00000');
    await stack.payments.sessions.notifyPayerReturned(started.sessionId);
    const result = await finished(started.sessionId);
    expect(result.phase).toBe('failed');
    const ledger = await stack.sandbox.ledger(started.sessionId);
    expect(ledger.entries.filter((e) => e.kind === 'capture' || e.kind === 'charge')).toHaveLength(0);
  });

  it('thief: canceled at the hold stage', async () => {
    const started = await stack.payments.sessions.startCardCheckout({
      reference: ref('thief'),
      amount: rub(700),
      card: card(FRICTIONLESS),
      customer: { user_id: 'u1', customer: { reference: 'thief' } },
    });
    const result = await finished(started.sessionId);
    expect(['failed', 'canceled']).toContain(result.phase);
  });

  it('manual approval: the Update approves; a finalize now is refused synchronously', async () => {
    const started = await stack.payments.sessions.startCardCheckout(
      {
        reference: ref('manual'),
        amount: rub(900),
        card: card(FRICTIONLESS),
        customer: { user_id: 'u1' },
        settings: { approval: { mode: 'manual', deadlineMs: 30_000 } },
      },
      { waitMs: 15_000 },
    );
    expect(started.phase).toBe('awaiting_approval');
    await expect(stack.payments.sessions.finalize(started.sessionId, 100)).rejects.toMatchObject({
      name: 'SessionStateError',
      code: 'finalize_automatic',
    });
    const approved = await stack.payments.sessions.approve(started.sessionId);
    expect(['processing', 'succeeded', 'awaiting_approval']).toContain(approved.phase);
    const result = await finished(started.sessionId);
    expect(result.phase).toBe('succeeded');
  });

  it('manual approval with no decision before the deadline cancels', async () => {
    const started = await stack.payments.sessions.startCardCheckout({
      reference: ref('deadline'),
      amount: rub(900),
      card: card(FRICTIONLESS),
      customer: { user_id: 'u1' },
      settings: { approval: { mode: 'manual', deadlineMs: 1_500 } },
    });
    const result = await finished(started.sessionId);
    expect(result.phase).toBe('canceled');
    expect(result.reason?.code).toBe('decision_deadline');
  });
});
