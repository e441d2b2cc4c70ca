/**
 * Webhooks are accelerators, never the truth (docs/decisions/003-webhooks-accelerate-state-is-truth.md):
 * duplicated, reordered and late deliveries (sandbox webhook faults) leave the result and the ledger exactly
 * as without them, and a webhook that arrives before its session's workflow exists is answered 503 and lands
 * on redelivery.
 */
import { sign } from 'node:crypto';
import { mergeSettings } from '../../common/settings';
import { handleProviderWebhook } from '../../client/webhook-handler';
import { storedStates } from '../../store/sessions';
import { createWebhookVerifier, deriveIdempotencyKey } from '../../provider';
import type { SessionInput } from '../../common/session-input';
import type { payoutWorkflow as PayoutWorkflow } from '../../workflows/payout';
import type { SessionView as SessionResult } from '../../common/views';
import { CardDetails } from '../../provider';
import { startStack, type TestStack } from '../helpers/stack';
import { finalView } from '../helpers/final';
import { until } from '../helpers/until';
import { TEST_CARD } from '../../sandbox/test-cards';

const card = (pan: string) =>
  new CardDetails({ card_number: pan, card_exp_month: '12', card_exp_year: '30', card_code: '123' });
let n = 0;
const ref = (p: string) => `${p}-${Date.now()}-${++n}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Delivery {
  eventId: string;
  copy: number;
  type: string;
  attempt: number;
  /** When this attempt started (ms since the epoch). */
  atMs: number;
  httpStatus?: number;
  state: string;
}

jest.setTimeout(90_000);

describe('webhook delivery faults change nothing (hold project: approve, finalize, result)', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ webhooks: true, hold: true });
  });
  afterAll(async () => {
    await stack?.close();
  });
  afterEach(async () => {
    await stack.sandbox.plain('DELETE', '/sandbox/faults');
  });

  async function setFaults(rules: object[]) {
    const res = await stack.sandbox.plain('POST', '/sandbox/faults', { rules });
    expect(res.status).toBe(200);
  }

  async function deliveries(sessionId: string): Promise<Delivery[]> {
    const res = await stack.sandbox.plain('GET', `/sandbox/webhooks?session_id=${sessionId}`);
    return res.body.deliveries as Delivery[];
  }

  /** Waits until every emitted event (each copy) has been delivered: nothing more can arrive. */
  async function allDelivered(sessionId: string, copies: number): Promise<Delivery[]> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const events = (await stack.sandbox.plain('GET', `/sandbox/events?session_id=${sessionId}`)).body
        .events as unknown[];
      const log = await deliveries(sessionId);
      const delivered = new Set(
        log.filter((d) => d.state === 'delivered').map((d) => `${d.eventId}/${d.copy}`),
      );
      if (delivered.size === events.length * copies) return log;
      if (Date.now() > deadline)
        throw new Error(`not all webhooks delivered: ${JSON.stringify(log.map((d) => [d.type, d.state]))}`);
      await sleep(100);
    }
  }

  /** What must not change: the phase, the operations (ids aside), the reason and the ledger. */
  async function checkout(): Promise<{ id: string; result: SessionResult; outcome: unknown }> {
    const started = await stack.payments.sessions.startCardCheckout({
      reference: ref('wh'),
      amount: { amount: 3_000, currency: 'RUB' },
      card: card(TEST_CARD.visa),
      customer: { user_id: 'u1' },
    });
    const result = await finalView(stack.temporal, started.sessionId);
    const ledger = (await stack.sandbox.ledger(started.sessionId)).entries.map((e) => [e.kind, e.amount]);
    return {
      id: started.sessionId,
      result,
      outcome: {
        phase: result.phase,
        reason: result.reason,
        providerStatus: result.providerStatus,
        operations: result.operations.map(({ id: _id, ...o }) => o),
        ledger,
      },
    };
  }

  /** The outcome without any fault (asserted first below); every faulty run must equal it. */
  const baseline = {
    phase: 'succeeded',
    reason: undefined,
    providerStatus: 'completed',
    operations: [{ kind: 'payment', status: 'successful', amount: 3_000, currency: 'rub' }],
    ledger: [
      ['hold', 3_000],
      ['capture', 3_000],
    ],
  };

  it('baseline without faults', async () => {
    const { id, outcome } = await checkout();
    expect(outcome).toEqual(baseline);
    const log = await allDelivered(id, 1);
    const delivered = log.filter((d) => d.state === 'delivered');
    expect(delivered.map((d) => d.type)).toEqual([
      'approve_pending',
      'finalization_pending',
      'checkout_results',
    ]);
    // Any other attempt is the provider's own retry: of a webhook that came before the session's workflow
    // existed (503 unknown_session: on a loaded machine the intake can still be starting it), or that the
    // loaded API did not answer within the provider's timeout (no status).
    for (const d of log.filter((x) => x.state !== 'delivered')) {
      expect([d.type, d.state]).toEqual([d.type, 'retrying']);
      expect([503, null, undefined]).toContain(d.httpStatus);
    }
  });

  /**
   * After every copy landed, the session is still its checkout run with the same result, every answer
   * was 200, and no copy opened a new run.
   */
  async function expectUntouched(id: string, copies: number) {
    const log = await allDelivered(id, copies);
    const described = await stack.temporal.workflow.getHandle(id).describe();
    expect(described.type).toBe('checkoutWorkflow');
    const view = await stack.payments.sessions.get(id);
    expect(view).toMatchObject({ kind: 'card_checkout', phase: 'succeeded', final: true });
    const answers = stack.webhooks.filter((w) => w.sessionId === id);
    expect(answers.every((w) => w.status === 200)).toBe(true);
    expect(answers.map((w) => w.outcome)).not.toContain('reopened');
    return { log, answers };
  }

  it('duplicated webhooks: same result, same ledger; copies are ignored', async () => {
    await setFaults([{ kind: 'webhook_duplicate' }]);
    const { id, outcome } = await checkout();
    expect(outcome).toEqual(baseline);
    const { log } = await expectUntouched(id, 2);
    expect(log.filter((d) => d.copy === 1 && d.state === 'delivered')).toHaveLength(3);
    // A copy that reached the running workflow is logged as ignored; one after the end is already known.
    // The result's copy may land after the result was read (the run follows the session for a while),
    // and a signal answered 200 is handled a moment later: read the session again until all three tell.
    const known = stack.webhooks.filter((w) => w.sessionId === id && w.outcome === 'already_known').length;
    const told = await until(
      'every copy ignored or already known',
      async () => (await stack.payments.sessions.get(id)).events,
      (events) => events.filter((e) => e.detail?.startsWith('ignored')).length + known >= 3,
      10_000,
    );
    expect(told.filter((e) => e.detail?.startsWith('ignored')).length + known).toBeGreaterThanOrEqual(3);
  });

  it('reordered webhooks: same result, same ledger; the older event after the newer one is ignored', async () => {
    // Held until the next event of the session overtakes it: the polling fallback moves the session on
    // meanwhile. The bound only matters on a badly loaded machine, where the next event may be late.
    await setFaults([
      { kind: 'webhook_reorder', eventType: 'approve_pending', maxHoldMs: 30_000 },
      { kind: 'webhook_reorder', eventType: 'finalization_pending', maxHoldMs: 30_000 },
    ]);
    const { id, result, outcome } = await checkout();
    expect(outcome).toEqual(baseline);
    const { log, answers } = await expectUntouched(id, 1);
    const ignored = result.events.filter((e) => e.detail?.startsWith('ignored')).length;
    expect(ignored + answers.filter((w) => w.outcome === 'already_known').length).toBeGreaterThanOrEqual(1);
    const firstDelivered = log.filter((d) => d.state === 'delivered').map((d) => d.type);
    expect(firstDelivered).not.toEqual(['approve_pending', 'finalization_pending', 'checkout_results']);
  });

  it('late webhooks (delayed past the polling fallback): same result, same ledger', async () => {
    // Each webhook is held back well beyond the polling fallback (lateAfterMs, 2 s in tests).
    const delayMs = 8_000;
    await setFaults([{ kind: 'webhook_delay', ms: delayMs }]);
    const { id, result, outcome } = await checkout();
    expect(outcome).toEqual(baseline);
    const { log, answers } = await expectUntouched(id, 1);
    // The saga did not wait for the webhooks: polling found each step, and the result was final
    // before the final result's webhook was even delivered (no wall-clock bound on the whole run).
    const applied = result.events.filter((e) => e.detail?.includes(' -> '));
    expect(applied.filter((e) => e.source === 'poll').length).toBeGreaterThan(0);
    expect(applied.filter((e) => e.source === 'webhook')).toEqual([]);
    const resultDelivery = log.find((d) => d.type === 'checkout_results' && d.state === 'delivered');
    expect(resultDelivery).toBeDefined();
    expect(Date.parse(result.finalAt!)).toBeLessThan(resultDelivery!.atMs);
    // The late copies reached the session (signaled while it follows, or known to its closed run) and
    // changed nothing: the audit trail records each as not applied.
    expect(answers.every((w) => w.outcome === 'signaled' || w.outcome === 'already_known')).toBe(true);
    const audit = await stack.payments.sessions.providerEvents(id);
    expect(audit.filter((e) => e.via === 'webhook').every((e) => e.outcome !== 'applied')).toBe(true);
  });

  it('all at once (duplicate + reorder + delay): same result, same ledger', async () => {
    await setFaults([
      { kind: 'webhook_duplicate', rate: 0.5 },
      { kind: 'webhook_reorder', maxHoldMs: 500 },
      { kind: 'webhook_delay', ms: 1_500, rate: 0.5 },
    ]);
    const { id, outcome } = await checkout();
    expect(outcome).toEqual(baseline);
    const events = (await stack.sandbox.plain('GET', `/sandbox/events?session_id=${id}`)).body.events.length;
    // 0.5 duplicates: some events have a second copy; wait for whatever was made.
    const deadline = Date.now() + 30_000;
    for (;;) {
      const log = await deliveries(id);
      const copies = new Set(log.map((d) => `${d.eventId}/${d.copy}`));
      const delivered = new Set(
        log.filter((d) => d.state === 'delivered').map((d) => `${d.eventId}/${d.copy}`),
      );
      if (copies.size >= events && delivered.size === copies.size) break;
      if (Date.now() > deadline) throw new Error('webhooks not delivered');
      await sleep(100);
    }
    expect((await stack.temporal.workflow.getHandle(id).describe()).type).toBe('checkoutWorkflow');
    expect(stack.webhooks.filter((w) => w.sessionId === id).every((w) => w.status === 200)).toBe(true);
  });
});

describe('a webhook that arrives before its workflow exists is not lost', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ webhooks: true });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('is answered 503, and the provider redelivers it once the workflow exists (200)', async () => {
    const reference = ref('early');
    const money = { amount: 1_500, currency: 'rub' };
    const init = await stack.provider.initiate(
      { sum_info: { sum: money.amount, currency_code: money.currency } },
      { idempotencyKey: deriveIdempotencyKey(`ref:${reference}`, 'initiate') },
    );
    const id = init.session_info.id;

    // 1. Straight into the handler: a validly signed event for a session with no workflow -> 503.
    const raw = Buffer.from(JSON.stringify({ type: 'approve_pending', session_info: init.session_info }));
    const handled = await handleProviderWebhook(
      raw,
      sign('sha256', raw, stack.sandbox.keys.service.privateKey).toString('base64'),
      {
        verify: createWebhookVerifier(stack.serviceKeys),
        temporal: stack.temporal,
        taskQueue: stack.taskQueue,
        stored: storedStates(stack.store),
      },
    );
    expect(handled).toMatchObject({ status: 503, outcome: 'unknown_session', sessionId: id });
    await expect(stack.temporal.workflow.getHandle(id).describe()).rejects.toThrow();

    // 2. The real provider: the operation starts before any workflow, its approve_pending gets 503.
    const banks = (await stack.sandbox.get('sbp/banks')).body.banks as { id: string }[];
    const startedOp = await stack.provider.startTransfer(
      {
        session_id: id,
        payout_info: {
          type: 'account_info',
          account_info: {
            payment_system: 'fps_info_verification',
            fps_info_verification: { phone_number: '+79990001122', bank_identifier: banks[0]!.id },
          },
        },
      },
      { idempotencyKey: deriveIdempotencyKey(id, 'start') },
    );
    const deadline = Date.now() + 10_000;
    const log = async () =>
      (await stack.sandbox.plain('GET', `/sandbox/webhooks?session_id=${id}`)).body.deliveries as Delivery[];
    while (!(await log()).some((d) => d.type === 'approve_pending' && d.httpStatus === 503)) {
      if (Date.now() > deadline) throw new Error('approve_pending was never answered 503');
      await sleep(20);
    }

    // 3. Now the workflow. Polling is pushed far out: only the redelivered webhook can move it.
    const settings = mergeSettings(stack.settings, { polling: { lateAfterMs: 120_000 } });
    const input: SessionInput = {
      sessionId: id,
      kind: 'payout',
      reference,
      request: { money },
      start: { by: 'starter' },
      settings,
      initialSnapshot: startedOp.session_info,
    };
    await stack.temporal.workflow.start<typeof PayoutWorkflow>('payoutWorkflow', {
      workflowId: id,
      taskQueue: stack.taskQueue,
      args: [input],
    });
    const result = await finalView(stack.temporal, id);
    expect(result.phase).toBe('succeeded');
    expect(result.events.filter((e) => e.source === 'poll')).toEqual([]);
    expect((await stack.sandbox.ledger(id)).entries.map((e) => e.kind)).toEqual(['payout']);

    // The delivery log: approve_pending was refused (503, retrying), then delivered (200) later.
    const attempts = (await log()).filter((d) => d.type === 'approve_pending');
    expect(attempts[0]).toMatchObject({ attempt: 1, httpStatus: 503, state: 'retrying' });
    expect(attempts.at(-1)).toMatchObject({ httpStatus: 200, state: 'delivered' });
    expect(attempts.at(-1)!.attempt).toBeGreaterThan(1);
    const answers = stack.webhooks.filter((w) => w.sessionId === id && w.status !== 503);
    expect(answers.map((w) => w.outcome)).toContain('signaled');
  });
});
