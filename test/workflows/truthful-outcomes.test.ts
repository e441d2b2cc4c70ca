/**
 * Truthful outcomes: what a session tells a partner is what the provider did, on the real stack (sandbox
 * over HTTP with real keys, paysaga worker on the shared dev server, the API over HTTP where a partner
 * would call it), judged by the provider's truth: the sandbox ledger and transaction/state.
 *
 * Each test says what it protects. The long outages are in truthful-outcomes-outages.test.ts; the
 * behaviours covered elsewhere are named in the block below.
 */
import { sign } from 'node:crypto';
import { reason, reasonText } from '../../common/reasons';
import { NeedsAttention, PaymentStatus, sessionSearchAttributes } from '../../common/search-attributes';
import type { SessionInput, SessionState } from '../../common/session-input';
import { mergeSettings } from '../../common/settings';
import type { ProviderEventRecord, SessionView } from '../../common/views';
import { cardCheckoutStart, initiateBody } from '../../client/provider-bodies';
import { CardDetails, deriveIdempotencyKey } from '../../provider';
import type { checkoutWorkflow } from '../../workflows/checkout';
import { card, FRICTIONLESS, ref, rub, startCheckout, useApiStack, type ApiStack } from '../api/api-stack';
import { finalView } from '../helpers/final';

jest.setTimeout(90_000);

/*
 * Covered by tests elsewhere (run them with this file to see the whole picture):
 *   - the API refuses what the provider must refuse: test/api/checkouts.test.ts, "bad input: 400 naming
 *     field and rule, nothing started" ("payment without customer", "card without expiry and code");
 *   - finalization.auto_partial.amount above the amount: test/api/checkouts.test.ts, "a partial finalize
 *     above the amount" (400 naming settings.finalization.amount);
 *   - the session is one resource: test/workflows/refunds.test.ts ("partial refunds up to the whole
 *     payment; the session stays the payment ...", "after the workflow closed, a refund opens a new run
 *     that carries the whole session on", "a chargeback after the result is an operation of the
 *     session ...") and over HTTP test/api/sessions.test.ts ("partial refund, the same key again ...");
 *   - a client mistake as a typed error: test/workflows/identity-check.test.ts ("the provider's refusal
 *     (an unknown bank) is a typed error") and test/api/kinds.test.ts; what is missing over HTTP is below.
 */

const main = useApiStack({ webhooks: true });

/* eslint-disable @typescript-eslint/no-explicit-any -- provider answers are read field by field */

async function setFaults(s: ApiStack, rules: object[]): Promise<void> {
  const res = await s.stack.sandbox.plain('POST', '/sandbox/faults', { rules });
  expect(res.status).toBe(200);
}

async function faultRules(s: ApiStack): Promise<{ kind: string; fired: number }[]> {
  return (await s.stack.sandbox.plain('GET', '/sandbox/faults')).body.rules;
}

/** Waits for `cond` (a state, never a duration), at most `ms`. */
async function waitFor(what: string, cond: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`never happened: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Long polls the session until `pred` holds. */
async function until(
  s: ApiStack,
  id: string,
  pred: (v: SessionView) => boolean,
  ms = 60_000,
): Promise<SessionView> {
  const deadline = Date.now() + ms;
  let view = await s.payments.sessions.get(id);
  while (!pred(view)) {
    if (Date.now() > deadline) throw new Error(`session ${id} never got there: ${JSON.stringify(view)}`);
    view = await s.payments.sessions.waitForChange(id, {
      afterVersion: view.version,
      timeoutMs: Math.min(10_000, Math.max(1, deadline - Date.now())),
    });
  }
  return view;
}

const finished = (s: ApiStack, id: string): Promise<SessionView> => finalView(s.stack.temporal, id);

async function moves(s: ApiStack, id: string): Promise<[string, number][]> {
  return (await s.stack.sandbox.ledger(id)).entries.map((e) => [e.kind, e.amount]);
}

async function providerState(s: ApiStack, id: string): Promise<any> {
  return (await s.stack.sandbox.post('transaction/state', { session_id: id })).body.session_info;
}

async function searchAttributes(s: ApiStack, id: string) {
  const d = await s.stack.temporal.workflow.getHandle(id).describe();
  return {
    status: d.typedSearchAttributes.get(PaymentStatus),
    attention: d.typedSearchAttributes.get(NeedsAttention),
  };
}

const cardBody = (reference: string, amount: number, settings?: object) => ({
  method: 'card',
  reference,
  amount: rub(amount),
  card: card(FRICTIONLESS),
  customer: { user_id: 'u1' },
  ...(settings ? { settings } : {}),
});

async function create(s: ApiStack, body: object, wait = 0): Promise<any> {
  const res = await s.call('POST', `/v1/checkouts?wait=${wait}`, { body });
  if (res.status !== 201) throw new Error(`checkout answered ${res.status}: ${res.text}`);
  return res.body;
}

describe('a cancel while an automatic approve is in flight', () => {
  afterEach(() => main.stack.sandbox.plain('DELETE', '/sandbox/faults'));

  // A decision is accepted only where it will be carried out: a cancel while the automatic approve is in
  // flight is refused, and the session and its worker go on.
  it('is refused 409 (decisions only in manual policies); the session succeeds once; the worker keeps running', async () => {
    await setFaults(main, [{ kind: 'latency', path: 'transaction/approve', ms: 8_000, times: 1 }]);
    const { sessionId: id } = await create(main, cardBody(ref('f1'), 4_100));
    // The automatic approve has reached the provider, which holds it: the provider still waits for it.
    await waitFor('the approve reaches the provider', async () => (await faultRules(main))[0]?.fired === 1);
    expect((await providerState(main, id)).next_step).toBe('approve');

    const cancel = await main.call('POST', `/v1/sessions/${id}/cancel`, { body: { reason: 'too late' } });
    expect(cancel.status).toBe(409);
    expect(cancel.body.error.code).toBe('not_cancelable');
    const approve = await main.call('POST', `/v1/sessions/${id}/approve`);
    expect(approve.status).toBe(409);
    expect(approve.body.error.code).toBe('approve_automatic');

    const result = await finished(main, id);
    expect(result).toMatchObject({ phase: 'succeeded', final: true });
    expect(await moves(main, id)).toEqual([
      ['hold', 4_100],
      ['capture', 4_100],
    ]);
    // The worker is alive: a session started afterwards runs to its end.
    const next = await startCheckout(main, ref('f1-next'), {}, 1_200);
    expect((await finished(main, next.sessionId)).phase).toBe('succeeded');
  });
});

describe('a final phase stays final', () => {
  afterEach(() => main.stack.sandbox.plain('DELETE', '/sandbox/faults'));

  // A start refusal is final: no later deadline may end the session a second time or change what it showed.
  it('a checkout refused at start is failed (start_failed) and unchanged past every deadline, PaymentStatus too', async () => {
    // The provider refuses the starter's card at start/checkout.
    await setFaults(main, [
      {
        kind: 'refuse',
        path: 'transaction/start/checkout',
        errorCode: 'invalid_request',
        description: 'payment_info.card_info.card_details.card_number.invalid_value',
        times: 1,
      },
    ]);
    // Every deadline passes while the workflow still follows the session (followMs outlasts them all).
    const settings = {
      deadlines: { startMs: 1_000, payerActionMs: 1_000, sessionMs: 5_000 },
      approval: { mode: 'manual', deadlineMs: 1_000 },
      followMs: 8_000,
    };
    const { sessionId: id } = await create(main, cardBody(ref('f2'), 2_200, settings));
    const result = await finished(main, id);
    expect(result).toMatchObject({ phase: 'failed', final: true });
    expect(result.reason).toEqual({
      code: 'start_failed',
      providerCode: 'invalid_request',
      detail: 'payment_info.card_info.card_details.card_number.invalid_value',
    });

    // The run closes after following the session past every deadline; its state is the session's.
    const closed = (await main.stack.temporal.workflow.getHandle(id).result()) as SessionState;
    expect(closed.final).toMatchObject({ phase: 'failed', reason: result.reason });
    const later = await main.call('GET', `/v1/sessions/${id}`);
    expect(later.body).toMatchObject({ phase: 'failed', final: true, reason: result.reason });
    expect(later.body.finalAt).toBe(result.finalAt);
    expect((await searchAttributes(main, id)).status).toBe('failed');
    expect(await moves(main, id)).toEqual([]);
  });
});

describe('a refund after a partial finalize', () => {
  const hold = useApiStack({ webhooks: true, hold: true });

  // What is left to refund is what the hold captured, not what it held.
  it('hold 10000, finalize 4000: the view shows 4000 captured; a refund without amount refunds exactly 4000', async () => {
    const manual = { mode: 'manual', deadlineMs: 60_000 };
    const { sessionId: id, phase } = await startCheckout(hold, ref('f3'), { finalization: manual }, 10_000);
    expect(phase).toBe('awaiting_finalization');
    const finalized = await hold.call('POST', `/v1/sessions/${id}/finalize`, { body: { amount: 4_000 } });
    expect(finalized.status).toBe(200);
    const paid = await finished(hold, id);
    expect(paid).toMatchObject({ phase: 'succeeded', money: { amount: 10_000 } });
    expect(paid.totals).toMatchObject({ held: 0, captured: 4_000, refunded: 0, net: 4_000 });
    expect(paid.operations).toEqual([expect.objectContaining({ kind: 'payment', captured: 4_000 })]);

    const rest = await hold.call('POST', `/v1/sessions/${id}/refunds`, { idempotencyKey: ref('f3-rest') });
    expect(rest.status).toBe(201);
    expect(rest.body.refunds).toEqual([expect.objectContaining({ amount: 4_000 })]);
    const done = await until(hold, id, (v) => ['succeeded', 'failed'].includes(v.refunds[0]?.status ?? ''));
    expect(done.refunds).toEqual([expect.objectContaining({ amount: 4_000, status: 'succeeded' })]);
    expect(done.totals).toMatchObject({ captured: 4_000, refunded: 4_000, net: 0 });
    // Nothing is left: another refund is refused before anything reaches the provider.
    const more = await hold.call('POST', `/v1/sessions/${id}/refunds`, {
      body: { amount: 1 },
      idempotencyKey: ref('f3-more'),
    });
    expect(more.status).toBe(409);
    expect(more.body.error.code).toBe('fully_refunded');
    expect(await moves(hold, id)).toEqual([
      ['hold', 10_000],
      ['capture', 4_000],
      ['release', 6_000],
      ['refund', 4_000],
    ]);
  });
});

describe('"same reference, same session" outlives the provider\'s idempotency keys', () => {
  // Keys live 200 s × timeScale 0.01 = 2 s at this sandbox (sandbox config idempotencyTtlSeconds).
  const k = useApiStack({ webhooks: true, sandbox: { config: { idempotencyTtlSeconds: 200 } } });

  // The provider forgets an idempotency key after 24 hours; paysaga's reference still names the same session,
  // and the card is not charged again.
  it('the same create request after the keys expired answers the same session; no provider session, no money', async () => {
    const body = cardBody(ref('f6'), 3_600);
    const first = await create(k, body);
    expect((await finished(k, first.sessionId)).phase).toBe('succeeded');
    // The provider has forgotten every key it was sent.
    await waitFor(
      'the provider forgets its keys',
      async () => (await k.stack.sandbox.stats()).stats.idempotencyKeys === 0,
    );
    const before = (await k.stack.sandbox.stats()).stats;

    const again = await k.call('POST', '/v1/checkouts', { body });
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toMatchObject({ sessionId: first.sessionId, phase: 'succeeded' });
    const after = (await k.stack.sandbox.stats()).stats;
    expect(after.sessions).toBe(before.sessions);
    expect(after.payments).toBe(before.payments);
    expect(after.ledgerEntries).toBe(before.ledgerEntries);
    expect(await moves(k, first.sessionId)).toEqual([
      ['hold', 3_600],
      ['capture', 3_600],
    ]);
  });
});

describe('a refused decision is an error', () => {
  const hold = useApiStack({ webhooks: true, hold: true });
  afterEach(async () => {
    await main.stack.sandbox.plain('DELETE', '/sandbox/faults');
    await hold.stack.sandbox.plain('DELETE', '/sandbox/faults');
  });

  const refuse = (path: string, description: string) => ({
    kind: 'refuse',
    path,
    errorCode: 'invalid_request',
    description,
    times: 1,
  });
  const manual = { mode: 'manual', deadlineMs: 60_000 };

  // A decision the provider refuses is an error for the caller, and the session keeps following the provider,
  // which still waits for a decision.
  it('approve refused by the provider: 409 provider_refused; the phase follows the provider; a later approve charges once', async () => {
    const { sessionId: id, phase } = await startCheckout(
      main,
      ref('f7-approve'),
      { approval: manual },
      2_700,
    );
    expect(phase).toBe('awaiting_approval');
    await setFaults(main, [refuse('transaction/approve', 'session_id.not_awaiting_approval')]);
    const refused = await main.call('POST', `/v1/sessions/${id}/approve`);
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('provider_refused');
    expect(refused.body.error.message).toBe(
      'the provider refused transaction/approve: invalid_request: session_id.not_awaiting_approval',
    );
    // The provider still waits for the approval, and so does the session.
    expect((await providerState(main, id)).next_step).toBe('approve');
    expect((await main.call('GET', `/v1/sessions/${id}`)).body).toMatchObject({
      phase: 'awaiting_approval',
      final: false,
    });
    const approved = await main.call('POST', `/v1/sessions/${id}/approve`);
    expect(approved.status).toBe(200);
    expect((await finished(main, id)).phase).toBe('succeeded');
    expect(await moves(main, id)).toEqual([
      ['hold', 2_700],
      ['capture', 2_700],
    ]);
  });

  it('cancel refused by the provider: 409 provider_refused; not canceled, no reason; a later cancel ends it', async () => {
    const { sessionId: id } = await startCheckout(main, ref('f7-cancel'), { approval: manual }, 1_900);
    await setFaults(main, [refuse('transaction/cancel', 'session_id.not_cancellable')]);
    const refused = await main.call('POST', `/v1/sessions/${id}/cancel`, {
      body: { reason: 'out of stock' },
    });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('provider_refused');
    const view = (await main.call('GET', `/v1/sessions/${id}`)).body;
    expect(view).toMatchObject({ phase: 'awaiting_approval', final: false });
    expect(view.reason).toBeUndefined();
    const canceled = await main.call('POST', `/v1/sessions/${id}/cancel`, {
      body: { reason: 'out of stock' },
    });
    expect(canceled.status).toBe(200);
    const result = await finished(main, id);
    expect(result).toMatchObject({
      phase: 'canceled',
      reason: { code: 'canceled_by_partner', detail: 'out of stock' },
    });
    expect(await moves(main, id)).toEqual([]);
  });

  it('finalize refused by the provider: 409 provider_refused; still awaiting finalization; a later finalize charges once', async () => {
    const { sessionId: id, phase } = await startCheckout(
      hold,
      ref('f7-final'),
      { finalization: manual },
      5_000,
    );
    expect(phase).toBe('awaiting_finalization');
    await setFaults(hold, [refuse('transaction/finalize', 'session_id.not_awaiting_finalization')]);
    const refused = await hold.call('POST', `/v1/sessions/${id}/finalize`, { body: { amount: 3_000 } });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('provider_refused');
    expect((await providerState(hold, id)).next_step).toBe('finalize');
    expect((await hold.call('GET', `/v1/sessions/${id}`)).body).toMatchObject({
      phase: 'awaiting_finalization',
      final: false,
    });
    const done = await hold.call('POST', `/v1/sessions/${id}/finalize`, { body: { amount: 3_000 } });
    expect(done.status).toBe(200);
    const result = await finished(hold, id);
    expect(result.phase).toBe('succeeded');
    expect(result.attention).toBeUndefined();
    const ledger = await moves(hold, id);
    expect(ledger.filter(([k]) => k === 'capture')).toEqual([['capture', 3_000]]);
  });
});

describe('amount checks', () => {
  const hold = useApiStack({ webhooks: true, hold: true });
  afterEach(() => hold.stack.sandbox.plain('DELETE', '/sandbox/faults'));

  // A partial finalize charged in full must be caught: the charge is checked against the finalized amount.
  it("(a) an over-capture after a partial finalize: attention amount_mismatch; the result stays the provider's", async () => {
    const manual = { mode: 'manual', deadlineMs: 60_000 };
    const { sessionId: id } = await startCheckout(hold, ref('f9a'), { finalization: manual }, 10_000);
    await setFaults(hold, [{ kind: 'overcapture', times: 1 }]);
    const res = await hold.call('POST', `/v1/sessions/${id}/finalize`, { body: { amount: 4_000 } });
    expect(res.status).toBe(200);
    const result = await finished(hold, id);
    expect(result).toMatchObject({ phase: 'succeeded', final: true });
    expect(result.attention).toMatchObject({
      code: 'amount_mismatch',
      detail: 'charged 10000 after a finalize of 4000',
    });
    expect(result.totals.captured).toBe(10_000);
    expect((await searchAttributes(hold, id)).attention).toBe(true);
    const ledger = await moves(hold, id);
    expect(ledger.filter(([k]) => k === 'capture')).toEqual([['capture', 10_000]]);
  });

  // A snapshot that is already final is checked too, before it is taken as the result.
  it('(b) a snapshot already final with another amount is checked too', async () => {
    await setFaults(hold, [{ kind: 'overcapture', times: 1 }]);
    const { sessionId: id } = await startCheckout(
      hold,
      ref('f9b'),
      { finalization: { mode: 'auto_partial', amount: 3_000 } },
      8_000,
    );
    const result = await finished(hold, id);
    expect(result.phase).toBe('succeeded');
    expect(result.attention).toMatchObject({
      code: 'amount_mismatch',
      detail: 'charged 8000 after a finalize of 3000',
    });
    // What revealed it was a final snapshot (the provider's answer to the finalize still showed the
    // hold): the mismatch was noted right after the first snapshot that showed the payment successful.
    const at = result.events.findIndex((e) => e.type === 'needs_attention');
    const firstSuccessful = result.events.findIndex((e) => /\/successful -> succeeded$/.test(e.detail ?? ''));
    expect(firstSuccessful).toBeGreaterThan(0);
    expect(at).toBe(firstSuccessful + 1);
    expect((await searchAttributes(hold, id)).attention).toBe(true);
  });
});

describe('the payment-form public token', () => {
  afterEach(() => main.stack.sandbox.plain('DELETE', '/sandbox/faults'));

  // public_token takes no idempotency key, so a lost answer cannot be asked again: the session needs
  // attention and ends at the payer's deadline without moving money.
  it('a token made but its answer lost: needs attention (payment_form_token_lost), then canceled at the payer deadline; nothing moved', async () => {
    await setFaults(main, [{ kind: 'drop_after_commit', path: 'public_token', times: 1 }]);
    const { sessionId: id } = await create(main, {
      method: 'payment_form',
      reference: ref('f10'),
      amount: rub(1_500),
      customer: { user_id: 'u1' },
      settings: { deadlines: { payerActionMs: 3_000 } },
    });
    const result = await finished(main, id);
    expect((await faultRules(main))[0]?.fired).toBe(1);
    expect(result).toMatchObject({ phase: 'canceled', final: true });
    const lost = 'the provider made a token whose answer never arrived';
    expect(result.reason).toEqual({ code: 'payment_form_token_lost', detail: lost });
    expect(result.publicToken).toBeUndefined();
    const attention = result.events.filter((e) => e.type === 'needs_attention');
    expect(attention.map((e) => e.detail)).toEqual([
      reasonText(reason('payment_form_token_lost', `${lost}; no payer can use it`)),
    ]);
    expect(result.events.findIndex((e) => e.type === 'needs_attention')).toBeLessThan(
      result.events.findIndex((e) => e.type === 'final'),
    );
    expect(await moves(main, id)).toEqual([]);
  });
});

describe('bounded history', () => {
  // A long wait must not grow one history without bound: the session continues as new, carrying its events
  // and refunds.
  it('a session waiting a long time continues as new and still ends right, carrying events and refunds', async () => {
    const { stack } = main;
    const reference = ref('f11');
    const money = { amount: 6_000, currency: 'rub' };
    const opened = await stack.provider.initiate(initiateBody(money, { customer: { user_id: 'u1' } }), {
      idempotencyKey: deriveIdempotencyKey(reference, 'initiate'),
    });
    const id = opened.session_info.id;
    const startedOp = await stack.provider.startCheckout(
      cardCheckoutStart(
        id,
        new CardDetails({
          card_number: FRICTIONLESS,
          card_exp_month: '12',
          card_exp_year: '30',
          card_code: '123',
        }),
      ),
      { idempotencyKey: deriveIdempotencyKey(id, 'start') },
    );
    const input: SessionInput = {
      sessionId: id,
      kind: 'card_checkout',
      reference,
      request: { money },
      start: { by: 'provider' },
      settings: mergeSettings(stack.settings, { approval: { mode: 'manual', deadlineMs: 120_000 } }),
      initialSnapshot: startedOp.session_info,
      // A few polls' worth of history: every wait below crosses it.
      continueAsNewAfter: 60,
    };
    const handle = await stack.temporal.workflow.start<typeof checkoutWorkflow>('checkoutWorkflow', {
      workflowId: id,
      taskQueue: stack.taskQueue,
      args: [input],
      typedSearchAttributes: sessionSearchAttributes({
        kind: 'card_checkout',
        status: 'starting',
        reference,
      }),
    });
    const firstRun = stack.temporal.workflow.getHandle(id, handle.firstExecutionRunId);
    await waitFor(
      'the waiting session continues as new',
      async () => (await firstRun.describe()).status.name === 'CONTINUED_AS_NEW',
      60_000,
    );
    const waiting = await main.call('GET', `/v1/sessions/${id}`);
    expect(waiting.body).toMatchObject({ phase: 'awaiting_approval', reference });

    expect((await main.call('POST', `/v1/sessions/${id}/approve`)).status).toBe(200);
    expect((await finished(main, id)).phase).toBe('succeeded');
    const refund = await main.call('POST', `/v1/sessions/${id}/refunds`, {
      body: { reference: `${reference}-r`, amount: 2_000 },
    });
    expect(refund.status).toBe(201);
    const done = await until(main, id, (v) => v.refunds[0]?.status === 'succeeded');
    expect(done).toMatchObject({ kind: 'card_checkout', reference, phase: 'succeeded' });
    expect(done.totals).toMatchObject({ captured: 6_000, refunded: 2_000 });
    const types = done.events.map((e) => e.type);
    // The first run's events are still there, with the continuations and what came after them.
    expect(types[0]).toBe('created');
    expect(types).toEqual(
      expect.arrayContaining(['continue_as_new', 'approve', 'final', 'refund_succeeded']),
    );
    expect(await moves(main, id)).toEqual([
      ['hold', 6_000],
      ['capture', 6_000],
      ['refund', 2_000],
    ]);
    let runs = 0;
    for await (const _run of stack.temporal.workflow.list({ query: `WorkflowId = '${id}'` })) runs++;
    expect(runs).toBeGreaterThan(1);
  });

  // Every duration setting is bounded (SETTINGS_BOUNDS in common/settings.ts), so no setting can make a
  // workflow poll without pause or wait past what its history allows.
  it.each([
    ['polling every 1 ms', { polling: { initialMs: 1 } }, 'settings.polling.initialMs'],
    ['a backoff capped at 2 hours', { polling: { maxMs: 7_200_000 } }, 'settings.polling.maxMs'],
    [
      'a session deadline over 30 days',
      { deadlines: { sessionMs: 31 * 86_400_000 } },
      'settings.deadlines.sessionMs',
    ],
  ])('the API refuses %s with 400 naming the field; nothing starts', async (_name, settings, field) => {
    const before = (await main.stack.sandbox.stats()).stats.sessions;
    const res = await main.call('POST', '/v1/checkouts', { body: cardBody(ref('f11-bad'), 100, settings) });
    expect(res.status).toBe(400);
    expect(res.body.error.fields.map((f: { field: string }) => f.field)).toEqual([field]);
    expect((await main.stack.sandbox.stats()).stats.sessions).toBe(before);
  });
});

describe('a client mistake answers 4xx', () => {
  // Another request under a reference the provider already knows is the client's mistake: 409, never a 502.
  it('the same reference with other parameters: 409 naming reference; nothing opened', async () => {
    const reference = ref('f13');
    await create(main, cardBody(reference, 1_000));
    const before = (await main.stack.sandbox.stats()).stats;
    const other = await main.call('POST', '/v1/checkouts', { body: cardBody(reference, 2_000) });
    expect(other.status).toBe(409);
    expect(other.body.error).toMatchObject({
      code: 'reference_conflict',
      fields: [expect.objectContaining({ field: 'reference' })],
    });
    expect((await main.stack.sandbox.stats()).stats.sessions).toBe(before.sessions);
  });

  // An unknown bank is the client's mistake: 400 naming the field, never a 502.
  it('an identity check with an unknown bank id: 400 naming bankId', async () => {
    const res = await main.call('POST', '/v1/identity-checks', {
      body: {
        reference: ref('f13-bank'),
        phone: '+79001234567',
        bankId: '999999999999',
        payee: { full_name: 'Ivan Petrov' },
      },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
    expect(res.body.error.fields.map((f: { field: string }) => f.field)).toEqual(['bankId']);
  });

  // An unknown recurring token is 404, never a 502.
  it('disabling an unknown recurring token: 404', async () => {
    const res = await main.call('POST', '/v1/recurring-tokens/disable', { body: { token: 'rt_999999' } });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
  });
});

describe('a signal that arrives while a run completes is not lost', () => {
  afterEach(() => main.stack.sandbox.plain('DELETE', '/sandbox/faults'));

  /** Signs and posts a provider event to the API's webhook receiver, as the sandbox would. */
  async function deliver(type: string, sessionInfo: unknown): Promise<{ status: number; outcome?: string }> {
    const raw = JSON.stringify({ type, session_info: sessionInfo });
    const signature = sign('sha256', Buffer.from(raw), main.stack.sandbox.keys.service.privateKey);
    const res = await main.call('POST', '/webhooks/provider', {
      raw,
      headers: { 'x-signature': signature.toString('base64') },
    });
    return { status: res.status, outcome: res.body?.outcome };
  }

  // An event acknowledged to the provider must be found in the session, even when it arrives while the
  // session's run closes.
  it('events delivered right around the close of its run (followMs 0) are each recorded in the session', async () => {
    // The result comes only by these deliveries (or a poll seconds later): checkout_results is dropped.
    const manual = { mode: 'manual', deadlineMs: 60_000 };
    const { sessionId: id } = await startCheckout(main, ref('f14'), { approval: manual, followMs: 0 }, 1_400);
    await setFaults(main, [{ kind: 'webhook_drop', eventType: 'checkout_results' }]);
    expect((await main.call('POST', `/v1/sessions/${id}/approve`)).status).toBe(200);
    const sent: { type: string; status: number; outcome?: string; updatedAt: string }[] = [];
    let n = 0;
    // Three senders of the provider's state as it is, each until it has seen the closed run a few times.
    const sender = async () => {
      let afterClose = 0;
      for (let i = 0; i < 50 && afterClose < 3; i++) {
        const info = await providerState(main, id);
        const type = `probe_${++n}`;
        const answer = await deliver(type, info);
        sent.push({ type, ...answer, updatedAt: info.updated_at });
        if (answer.outcome !== 'signaled') afterClose++;
      }
    };
    await Promise.all([sender(), sender(), sender()]);
    expect(sent.every((d) => d.status === 200)).toBe(true);
    expect(sent.some((d) => d.outcome === 'signaled')).toBe(true);
    expect(sent.some((d) => d.outcome !== 'signaled')).toBe(true);

    // The latest run closes too (it follows for 0 ms); its audit carries every earlier run's.
    await waitFor(
      'the latest run closes',
      async () => (await main.stack.temporal.workflow.getHandle(id).describe()).status.name !== 'RUNNING',
    );
    const state = (await main.stack.temporal.workflow.getHandle(id).result()) as SessionState;
    const recorded = new Map<string, ProviderEventRecord[]>();
    for (const r of state.providerEvents) recorded.set(r.type, [...(recorded.get(r.type) ?? []), r]);
    for (const d of sent) {
      if (d.outcome === 'already_known') {
        // Acknowledged because the closed run already had this state (or a newer one).
        expect(state.snapshot!.updated_at! >= d.updatedAt).toBe(true);
        continue;
      }
      expect([d.type, recorded.get(d.type)?.length]).toEqual([d.type, 1]);
    }
    expect((await finished(main, id)).phase).toBe('succeeded');
  });
});
