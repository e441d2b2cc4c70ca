/**
 * How, and how soon, paysaga learns of a chargeback whose every webhook was lost (docs/operations.md,
 * "The reconciler"). Webhooks are on, but the provider's every `checkout_refunded` webhook is dropped
 * (a sandbox fault), after the payment's workflow has closed: only the reconciler can tell. Its next pass
 * reads the session's state at the provider, finds the chargeback, and hands it to the session (a new
 * run), which records it: within one pause between passes and one pass.
 */
import { request } from 'undici';
import { finalView } from '../helpers/final';
import { startStack, type TestStack } from '../helpers/stack';
import { until } from '../helpers/until';
import { card, FRICTIONLESS, references, rub } from '../helpers/workflow-test';

jest.setTimeout(180_000);
const ref = references('lost');
/** The pause between two passes of this test's reconciler. */
const EVERY_MS = 3_000;

describe('a chargeback whose every webhook is lost', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ webhooks: true, settings: { followMs: 1_000 } });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it("is found by the reconciler's next pass and recorded on the session", async () => {
    const started = await stack.payments.sessions.startCardCheckout({
      reference: ref('pay'),
      amount: rub(4_000),
      card: card(FRICTIONLESS),
      customer: { user_id: 'u' },
    });
    expect((await finalView(stack.temporal, started.sessionId)).phase).toBe('succeeded');
    await until(
      'the payment workflow closed',
      async () => (await stack.temporal.workflow.getHandle(started.sessionId).describe()).status.name,
      (status) => status !== 'RUNNING',
      30_000,
      200,
    );

    // From now on every checkout_refunded webhook is lost.
    const faults = await request(`${stack.sandbox.url}/sandbox/faults`, {
      method: 'POST',
      body: JSON.stringify({ rules: [{ kind: 'webhook_drop', eventType: 'checkout_refunded' }] }),
      headers: { 'content-type': 'application/json' },
    });
    expect(faults.statusCode).toBe(200);
    await faults.body.dump();
    const reconciler = await stack.payments.startReconciler({
      everyMs: EVERY_MS,
      windowMs: 3_600_000,
      pageSize: 50,
    });

    const filed = Date.now();
    await stack.sandbox.plain('POST', '/sandbox/chargebacks', {
      session_id: started.sessionId,
      sum_info: { sum: 1_500, currency_code: 'rub' },
    });
    const seen = await until(
      'the chargeback on the session',
      () => stack.payments.sessions.get(started.sessionId),
      (v) => v.totals.chargedBack === 1_500,
      60_000,
      200,
    );
    const tookMs = Date.now() - filed;
    process.stderr.write(`[lost webhooks] the chargeback was recorded ${tookMs} ms after it was filed\n`);
    await stack.temporal.workflow.getHandle(reconciler).terminate('test over');

    // Recorded as an event of the session; its result stays what it was.
    expect(seen).toMatchObject({ phase: 'succeeded', final: true });
    expect(seen.operations.some((o) => o.kind === 'chargeback')).toBe(true);
    // The news came from the reconciler's read (a state sync), not from a webhook.
    const audit = await stack.payments.sessions.providerEvents(started.sessionId);
    expect(audit.some((e) => e.via === 'sync')).toBe(true);
    expect(audit.filter((e) => e.via === 'webhook' && e.type === 'checkout_refunded')).toEqual([]);
    // Within a pause and a pass (a pass over this stack's few sessions takes seconds).
    expect(tookMs).toBeLessThan(EVERY_MS + 30_000);
  });
});
