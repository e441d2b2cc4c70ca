/**
 * Nobody can fake an outcome (docs/decisions/016-results-are-proven.md): signals sent with the Temporal CLI,
 * plain and unencrypted, by someone who can reach the namespace but holds no provider key. A 3-D Secure
 * checkout whose payer never acts is told it succeeded in every way a signal can say it: unsigned, with a
 * made-up signature, with a body changed after signing, signed for another session, as a reconciler's state
 * sync, and malformed. It stays unpaid and waiting for the payer (nothing captured at the provider), answers
 * throughout, and every attempt is in its audit. Then the payer pays and the provider's own signed webhook is
 * applied.
 */
import { sign } from 'node:crypto';
import { providerEventsOf } from '../../store/sessions';
import { generateTestKeyPair } from '../helpers/keys';
import { completeThreeDs } from '../helpers/payer';
import { startStack, type TestStack } from '../helpers/stack';
import { cliSignal } from '../helpers/cli-signal';
import { until } from '../helpers/until';
import { references, sessionHelpers } from '../helpers/workflow-test';

const ref = references();

describe('a provider outcome needs the provider’s proof', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ webhooks: true });
  });
  afterAll(async () => {
    await stack?.close();
  });
  const { finished, startThreeDs } = sessionHelpers(() => stack);

  it('refuses every forged claim of success; the payer’s real payment is applied', async () => {
    const started = await startThreeDs(ref('forged'));
    const id = started.sessionId;
    expect(started.phase).toBe('awaiting_payer');
    const held = (await stack.payments.sessions.get(id)).lastSnapshot!;
    const later = new Date(Date.now() + 3_600_000).toISOString();
    const paid = {
      ...held,
      transaction_status: 'completed',
      updated_at: later,
      payment_info: { ...(held as { payment_info?: object }).payment_info, transaction_status: 'successful' },
    };
    const claim = (session_info: unknown) => ({ type: 'checkout_results', session_info });
    const body = Buffer.from(JSON.stringify(claim(paid)), 'utf8');
    const intruderKey = generateTestKeyPair().privateKey;
    const serviceKey = stack.sandbox.keys.service.privateKey;
    const forOther = Buffer.from(JSON.stringify(claim({ ...paid, id: 'ps_1' })), 'utf8');
    const now = () => new Date().toISOString();
    const attempts: [string, unknown][] = [
      ['unsigned, as webhooks once were', { event: claim(paid), receivedAt: now(), via: 'webhook' }],
      [
        'a made-up signature',
        { signed: { body: body.toString(), signature: 'AAAA' }, receivedAt: now(), via: 'webhook' },
      ],
      [
        'signed by another key',
        {
          signed: { body: body.toString(), signature: sign('sha256', body, intruderKey).toString('base64') },
          receivedAt: now(),
          via: 'replay',
        },
      ],
      [
        'changed after the provider signed it',
        {
          signed: {
            body: body.toString().replace('"completed"', '"completed" '),
            signature: sign('sha256', body, serviceKey).toString('base64'),
          },
          receivedAt: now(),
          via: 'webhook',
        },
      ],
      [
        'signed by the provider for another session',
        {
          signed: {
            body: forOther.toString(),
            signature: sign('sha256', forOther, serviceKey).toString('base64'),
          },
          receivedAt: now(),
          via: 'webhook',
        },
      ],
      ['a state sync', { event: claim(paid), receivedAt: now(), via: 'sync' }],
      [
        'sum_info without currency_code',
        { event: claim({ ...paid, sum_info: { sum: 2_000 } }), receivedAt: now(), via: 'webhook' },
      ],
      ['no session_info', { event: { type: 'checkout_results' }, receivedAt: now(), via: 'webhook' }],
      ['a number where a string belongs', { receivedAt: 5, via: 'webhook' }],
      ['a time no store holds', { event: claim(paid), receivedAt: '0000-01-01T00:00:00Z', via: 'webhook' }],
      ['not an object', 'succeeded'],
    ];
    for (const [, payload] of attempts) await cliSignal(id, 'providerEvent', payload);

    const audit = await until(
      'every forged delivery in the audit',
      () => stack.payments.sessions.providerEvents(id),
      (a) => a.filter((r) => r.outcome === 'refused' || r.outcome === 'confirming').length >= attempts.length,
      30_000,
    );
    const forged = audit.filter((r) => r.outcome === 'refused' || r.outcome === 'confirming');
    expect(forged.map((r) => [r.outcome, r.detail?.split(':')[0]])).toEqual([
      ['refused', 'unsigned'],
      ['refused', 'bad_signature'],
      ['refused', 'bad_signature'],
      ['refused', 'bad_signature'],
      ['refused', 'signed for another session'],
      ['confirming', undefined],
      ['refused', 'unsigned'],
      ['refused', 'unsigned'],
      ['refused', 'malformed'],
      ['refused', 'malformed'],
      ['refused', 'malformed'],
    ]);
    // The session's record in the store took every entry (a forged time did not stop its writes).
    await until(
      'the refused deliveries in the store',
      () => providerEventsOf(stack.store, id),
      (rows) => rows.filter((r) => r.outcome === 'refused').length === forged.length - 1,
    );
    expect(audit.filter((r) => r.updatedAt === later)).toEqual([]);

    // Unpaid, not final, answering, and the provider moved no money.
    const after = await stack.payments.sessions.get(id);
    expect(after).toMatchObject({ phase: 'awaiting_payer', final: false });
    expect(after.lastSnapshot?.updated_at).toBe(held.updated_at);
    const ledger = await stack.sandbox.ledger(id);
    expect(ledger.entries.filter((e) => e.kind === 'capture' || e.kind === 'charge')).toEqual([]);

    // The payer pays: the provider's signed webhook, verified again by the worker, settles it.
    await completeThreeDs(after.userAction, '12345');
    const result = await finished(id);
    expect(result.phase).toBe('succeeded');
    const applied = (await stack.payments.sessions.providerEvents(id)).filter((r) => r.outcome === 'applied');
    expect(applied.length).toBeGreaterThan(0);
    expect(applied.every((r) => r.via === 'webhook')).toBe(true);
    expect(
      (await stack.sandbox.ledger(id)).entries.filter((e) => e.kind === 'charge' || e.kind === 'capture'),
    ).toHaveLength(1);
  });
});
