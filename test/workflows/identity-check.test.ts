/**
 * FPS identity check sessions (spec, Endpoints rule 5), with webhooks on and off: a registered phone
 * completes without any approve step and without money; an unregistered one (…0000) is canceled with
 * a reason that says so; the same reference twice is the same session.
 */
import type { SessionResult } from '../../workflows/types';
import { startStack, type TestStack } from '../helpers/stack';

let n = 0;
const ref = (p: string) => `${p}-${Date.now()}-${++n}`;
const payee = { given_name: 'Ivan', family_name: 'Ivanov' };

describe.each([true, false])('identity check (webhooks %s)', (webhooks) => {
  let stack: TestStack;
  let bankId: string;
  beforeAll(async () => {
    stack = await startStack({ webhooks });
    bankId = ((await stack.sandbox.get('sbp/banks')).body.banks as { id: string }[])[0]!.id;
  });
  afterAll(async () => {
    await stack?.close();
  });

  const finished = (sessionId: string): Promise<SessionResult> =>
    stack.temporal.workflow.getHandle(sessionId).result();

  async function eventTypes(sessionId: string): Promise<string[]> {
    const res = await stack.sandbox.plain('GET', `/sandbox/events?session_id=${sessionId}`);
    return (res.body.events as { type: string }[]).map((e) => e.type);
  }

  it('a registered phone: succeeded, no approve step at all, nothing in the ledger', async () => {
    const started = await stack.payments.startIdentityCheck({
      reference: ref('idc-ok'),
      phone: '+79991112233',
      bankId,
      payee,
    });
    expect(started.sessionId).toMatch(/^ps_/);
    expect(started.kind).toBe('identity_check');
    const result = await finished(started.sessionId);
    expect(result.phase).toBe('succeeded');
    expect(result.reason).toBeUndefined();
    expect(result.operations).toEqual([
      expect.objectContaining({ kind: 'payout', status: 'successful', amount: 0 }),
    ]);
    // The provider never asked for an approval and paysaga never sent one.
    expect(await eventTypes(started.sessionId)).toEqual(['checkout_results']);
    expect(result.events.map((e) => e.type)).not.toContain('approve');
    expect(result.lastSnapshot?.actions?.approve).toBeUndefined();
    expect((await stack.sandbox.ledger(started.sessionId)).entries).toEqual([]);
  });

  it('an unregistered phone (…0000): canceled, with the reason', async () => {
    const started = await stack.payments.startIdentityCheck({
      reference: ref('idc-unreg'),
      phone: '+79990000000',
      bankId,
      payee,
    });
    const result = await finished(started.sessionId);
    expect(result.phase).toBe('canceled');
    expect(result.reason).toMatch(/^recipient_not_registered: /);
    expect(result.operations[0]).toMatchObject({ status: 'unsuccessful', error: 'recipient_not_registered' });
    expect(await eventTypes(started.sessionId)).toEqual(['checkout_results']);
    expect((await stack.sandbox.ledger(started.sessionId)).entries).toEqual([]);
  });

  it('a repeated start with the same reference returns the same session (running and finished)', async () => {
    const reference = ref('idc-same');
    const before = (await stack.sandbox.stats()).stats.sessions!;
    const a = await stack.payments.startIdentityCheck({ reference, phone: '+79991112244', bankId, payee });
    const b = await stack.payments.startIdentityCheck({ reference, phone: '+79991112244', bankId, payee });
    expect(b.sessionId).toBe(a.sessionId);
    await finished(a.sessionId);
    const c = await stack.payments.startIdentityCheck({ reference, phone: '+79991112244', bankId, payee });
    expect(c.sessionId).toBe(a.sessionId);
    expect(c.phase).toBe('succeeded');
    // Only one check was made at the provider for this reference.
    expect((await stack.sandbox.stats()).stats.sessions).toBe(before + 1);
  });
});
