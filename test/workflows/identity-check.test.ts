/**
 * FPS identity check sessions (spec, Endpoints rule 5), with webhooks on and off: a registered phone
 * completes without any approve step and without money; an unregistered one (…0000) is canceled with
 * a reason that says so; the same reference twice, or four times at once, is the same session and one
 * check at the provider; the same reference for another recipient is refused.
 */
import { ProviderRefusedError, ReferenceConflictError } from '../../client/errors';
import type { SessionView as SessionResult } from '../../common/views';
import { startStack, type TestStack } from '../helpers/stack';
import { finalView } from '../helpers/final';

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

  const finished = (sessionId: string): Promise<SessionResult> => finalView(stack.temporal, sessionId);

  async function eventTypes(sessionId: string): Promise<string[]> {
    const res = await stack.sandbox.plain('GET', `/sandbox/events?session_id=${sessionId}`);
    return (res.body.events as { type: string }[]).map((e) => e.type);
  }

  it('a registered phone: succeeded, no approve step at all, nothing in the ledger', async () => {
    const started = await stack.payments.identityChecks.start({
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
    const started = await stack.payments.identityChecks.start({
      reference: ref('idc-unreg'),
      phone: '+79990000000',
      bankId,
      payee,
    });
    const result = await finished(started.sessionId);
    expect(result.phase).toBe('canceled');
    expect(result.reason).toEqual({
      code: 'recipient_not_registered',
      detail: 'the phone number is not registered in FPS',
    });
    expect(result.operations[0]).toMatchObject({ status: 'unsuccessful', error: 'recipient_not_registered' });
    expect(await eventTypes(started.sessionId)).toEqual(['checkout_results']);
    expect((await stack.sandbox.ledger(started.sessionId)).entries).toEqual([]);
  });

  it('a repeated start with the same reference returns the same session (running and finished)', async () => {
    const reference = ref('idc-same');
    const before = (await stack.sandbox.stats()).stats.sessions!;
    const a = await stack.payments.identityChecks.start({ reference, phone: '+79991112244', bankId, payee });
    const b = await stack.payments.identityChecks.start({ reference, phone: '+79991112244', bankId, payee });
    expect(b.sessionId).toBe(a.sessionId);
    await finished(a.sessionId);
    const c = await stack.payments.identityChecks.start({ reference, phone: '+79991112244', bankId, payee });
    expect(c.sessionId).toBe(a.sessionId);
    expect(c.phase).toBe('succeeded');
    // Only one check was made at the provider for this reference.
    expect((await stack.sandbox.stats()).stats.sessions).toBe(before + 1);
  });

  it('concurrent starts with one reference make one check at the provider and share its session', async () => {
    const reference = ref('idc-race');
    const before = (await stack.sandbox.stats()).stats.sessions!;
    const views = await Promise.all(
      [1, 2, 3, 4].map(() =>
        stack.payments.identityChecks.start({ reference, phone: '+79991112255', bankId, payee }),
      ),
    );
    expect(new Set(views.map((v) => v.sessionId)).size).toBe(1);
    expect((await finished(views[0]!.sessionId)).phase).toBe('succeeded');
    expect((await stack.sandbox.stats()).stats.sessions).toBe(before + 1);
  });

  it('the same reference for another recipient is refused, naming the reference, and checks nothing', async () => {
    const reference = ref('idc-other');
    await stack.payments.identityChecks.start({ reference, phone: '+79991112266', bankId, payee });
    const before = (await stack.sandbox.stats()).stats.sessions!;
    const other = stack.payments.identityChecks.start({ reference, phone: '+79991112277', bankId, payee });
    await expect(other).rejects.toBeInstanceOf(ReferenceConflictError);
    await expect(other).rejects.toMatchObject({
      field: 'reference',
      rule: 'already used for another request (a repeat must be the same request)',
    });
    expect((await stack.sandbox.stats()).stats.sessions).toBe(before);
  });

  it("the provider's refusal (an unknown bank) is a typed error, and a corrected repeat may use the reference", async () => {
    const reference = ref('idc-bad-bank');
    const input = { reference, phone: '+79991112288', bankId: 'no-such-bank', payee };
    const before = (await stack.sandbox.stats()).stats.sessions!;
    for (let attempt = 0; attempt < 2; attempt++) {
      const err = await stack.payments.identityChecks.start(input).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ProviderRefusedError);
      expect(err).toMatchObject({
        refusal: {
          endpoint: 'sbp/identity_check',
          errorCode: 'invalid_request',
          description: expect.stringContaining('bank_identifier'),
        },
      });
    }
    expect((await stack.sandbox.stats()).stats.sessions).toBe(before);
    // Nothing was made for the refused request: the reference is free for the corrected one.
    const fixed = await stack.payments.identityChecks.start({ ...input, bankId });
    expect((await finished(fixed.sessionId)).phase).toBe('succeeded');
  });
});
