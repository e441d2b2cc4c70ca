/*
 * Fault injection and webhook delivery against the whole sandbox, over HTTP with real keys:
 * a partner's signed requests, a partner webhook endpoint, and the ledger / session state to tell
 * whether a faulted request changed anything.
 */
import { sign } from 'node:crypto';
import { request } from 'undici';
import { createWebhookVerifier } from '../../provider/webhook-verifier';
import { startSandbox, type RunningSandbox } from '../../sandbox/index';
import { generateTestKeys, type TestKeys } from '../helpers/keys';
import { startWebhookSink, type WebhookSink } from '../helpers/webhook-sink';
import { TEST_CARD } from '../../sandbox/test-cards';

jest.setTimeout(30_000);

let keys: TestKeys;
let sink: WebhookSink;
let sandbox: RunningSandbox;

beforeAll(async () => {
  keys = generateTestKeys();
  sink = await startWebhookSink();
  sandbox = await startSandbox({
    serviceKey: keys.service.privatePem,
    projects: [
      { id: 'p_hooks', publicKey: keys.partner.publicPem, webhookUrl: `${sink.url}/hooks` },
      { id: 'p_quiet', publicKey: keys.partner.publicPem, webhookUrl: `${sink.url}/quiet`, webhooks: false },
      { id: 'p_hold', publicKey: keys.partner.publicPem, webhookUrl: `${sink.url}/hold`, hold: true },
    ],
    timeScale: 0.001,
    stepMs: 20,
  });
});
afterAll(async () => {
  await sandbox?.close();
  await sink?.close();
});
beforeEach(async () => {
  await control('DELETE', '/sandbox/faults');
});

/** Answers are read field by field in the assertions; their shapes are the sandbox's business. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

interface Answer {
  status: number | null;
  body: Json;
  /** The client's error code (undici's UND_ERR_..., or Node's), when no answer came. */
  error: string | null;
  ms: number;
}

/** A partner call: body signed with the partner key, as the spec's Authentication section says. */
async function api(path: string, body: unknown, project = 'p_hooks'): Promise<Answer> {
  const bytes = Buffer.from(JSON.stringify(body), 'utf8');
  const started = Date.now();
  try {
    const res = await request(`${sandbox.url}/api/v1/${path}`, {
      method: 'POST',
      body: bytes,
      headers: {
        'content-type': 'application/json',
        'x-project-id': project,
        'x-signature': sign('sha256', bytes, keys.partner.privateKey).toString('base64'),
      },
    });
    const text = await res.body.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      /* a gateway-style text answer */
    }
    return { status: res.statusCode, body: parsed, error: null, ms: Date.now() - started };
  } catch (err) {
    const e = err as { code?: string; message: string };
    return { status: null, body: null, error: e.code ?? 'no_code', ms: Date.now() - started };
  }
}

async function control(
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Json }> {
  const res = await request(`${sandbox.url}${path}`, {
    method,
    ...(body === undefined
      ? {}
      : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
  return { status: res.statusCode, body: await res.body.json() };
}

const cardCheckout = (reference = 'ok') => ({
  payment_info: {
    type: 'card_info',
    card_info: {
      type: 'card_details',
      card_details: {
        card_number: TEST_CARD.visa,
        card_exp_month: '12',
        card_exp_year: '2030',
        card_code: '123',
      },
    },
  },
  sum_info: { sum: 1500, currency_code: 'rub' },
  user_info: { user_id: 'u_1', customer: { reference } },
});

/** A card payment up to approve_pending (webhook seen); returns its session id. */
async function paymentAwaitingApproval(project = 'p_hooks'): Promise<string> {
  const started = await api('transaction/init/checkout', cardCheckout(), project);
  expect(started.status).toBe(200);
  const sessionId = started.body.session_info.id as string;
  await waitUntil(
    async () =>
      (await api('transaction/state', { session_id: sessionId }, project)).body.session_info?.payments?.[0]
        ?.transaction_status === 'pending',
  );
  return sessionId;
}

async function waitUntil(cond: () => Promise<boolean> | boolean, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function ledgerOf(sessionId: string): Promise<unknown[]> {
  return (await control('GET', `/sandbox/ledger?session_id=${sessionId}`)).body.entries as unknown[];
}

describe('request faults on the sandbox API', () => {
  test('error_5xx on approve: 502 without processing: ledger and session unchanged; the retry then succeeds', async () => {
    const sessionId = await paymentAwaitingApproval();
    const ledgerBefore = await ledgerOf(sessionId);
    const stateBefore = (await api('transaction/state', { session_id: sessionId })).body.session_info;

    expect(
      (
        await control('POST', '/sandbox/faults', {
          rules: [{ kind: 'error_5xx', status: 502, path: 'transaction/approve', times: 1 }],
        })
      ).status,
    ).toBe(200);
    const faulted = await api('transaction/approve', { session_id: sessionId });
    expect(faulted.status).toBe(502);
    await new Promise((r) => setTimeout(r, 200)); // a processed approve would have moved on by now (stepMs 20 x 0.001)
    expect(await ledgerOf(sessionId)).toEqual(ledgerBefore);
    expect((await api('transaction/state', { session_id: sessionId })).body.session_info).toEqual(
      stateBefore,
    );

    const retried = await api('transaction/approve', { session_id: sessionId });
    expect(retried.status).toBe(200);
    expect(retried.body.status).toBe('ok');
  });

  test('drop_after_commit on approve: the client sees the connection close, yet the approve happened', async () => {
    const sessionId = await paymentAwaitingApproval();
    const ledgerBefore = await ledgerOf(sessionId);
    await control('POST', '/sandbox/faults', {
      rules: [{ kind: 'drop_after_commit', path: 'transaction/approve', times: 1 }],
    });
    const dropped = await api('transaction/approve', { session_id: sessionId });
    expect(dropped.status).toBeNull();
    // Which of the two a dropped socket gives depends on when the client hears it.
    expect(['UND_ERR_SOCKET', 'ECONNRESET']).toContain(dropped.error);

    // committed: the payment goes on to success and money moved, exactly once
    await waitUntil(
      async () =>
        (await api('transaction/state', { session_id: sessionId })).body.session_info.transaction_status ===
        'completed',
    );
    const state = (await api('transaction/state', { session_id: sessionId })).body.session_info;
    expect(state.payments[0].transaction_status).toBe('successful');
    expect((await ledgerOf(sessionId)).length).toBeGreaterThan(ledgerBefore.length);
    const rules = (await control('GET', '/sandbox/faults')).body.rules;
    expect(rules[0]).toMatchObject({ kind: 'drop_after_commit', remaining: 0, fired: 1 });
  });

  test('refuse on approve: the provider error named in the rule, nothing processed; the retry then succeeds', async () => {
    const sessionId = await paymentAwaitingApproval();
    const stateBefore = (await api('transaction/state', { session_id: sessionId })).body.session_info;
    const set = await control('POST', '/sandbox/faults', {
      rules: [
        {
          kind: 'refuse',
          path: 'transaction/approve',
          errorCode: 'invalid_request',
          description: 'session_id.not_awaiting_approval',
          times: 1,
        },
      ],
    });
    expect(set.status).toBe(200);
    const refused = await api('transaction/approve', { session_id: sessionId });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      status: 'error',
      error: { error_code: 'invalid_request', error_description: 'session_id.not_awaiting_approval' },
    });
    expect((await api('transaction/state', { session_id: sessionId })).body.session_info).toEqual(
      stateBefore,
    );
    const retried = await api('transaction/approve', { session_id: sessionId });
    expect(retried.status).toBe(200);
    expect((await control('GET', '/sandbox/faults')).body.rules[0]).toMatchObject({ fired: 1, remaining: 0 });
  });

  test('refuse: an unknown error code is refused naming the field; the status follows the code', async () => {
    const bad = await control('POST', '/sandbox/faults', {
      rules: [{ kind: 'refuse', errorCode: 'no_such_code' }],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.error_description).toBe('rules.0.errorCode.invalid_value');
    await control('POST', '/sandbox/faults', {
      rules: [{ kind: 'refuse', path: 'transaction/state', errorCode: 'repository_record_not_found' }],
    });
    const answer = await api('transaction/state', { session_id: 'ps_1' });
    expect(answer.status).toBe(404);
    expect(answer.body.error).toEqual({
      error_code: 'repository_record_not_found',
      error_description: 'sandbox_fault.refused',
    });
  });

  test('overcapture: a partial finalize charges the whole hold, and the session shows what was charged', async () => {
    const started = await api('transaction/init/checkout', cardCheckout(), 'p_hold');
    const sessionId = started.body.session_info.id as string;
    const state = async () =>
      (await api('transaction/state', { session_id: sessionId }, 'p_hold')).body.session_info;
    await waitUntil(async () => (await state()).next_step === 'approve');
    expect((await api('transaction/approve', { session_id: sessionId }, 'p_hold')).status).toBe(200);
    await waitUntil(async () => (await state()).next_step === 'finalize');
    await control('POST', '/sandbox/faults', { rules: [{ kind: 'overcapture', times: 1 }] });
    const finalized = await api(
      'transaction/finalize',
      { session_id: sessionId, sum_info: { sum: 500, currency_code: 'rub' } },
      'p_hold',
    );
    expect(finalized.status).toBe(200);
    await waitUntil(async () => (await state()).transaction_status === 'completed');
    const done = await state();
    expect(done.payments[0]).toMatchObject({
      transaction_status: 'successful',
      sum_info: { sum: 1500 },
    });
    const moves = (await ledgerOf(sessionId)) as { kind: string; amount: number }[];
    expect(moves.filter((m) => m.kind === 'capture').map((m) => m.amount)).toEqual([1500]);
    expect((await control('GET', '/sandbox/faults')).body.rules[0]).toMatchObject({ fired: 1 });
  });

  test('latency: the answer is delayed by at least ms; only the named path', async () => {
    await control('POST', '/sandbox/faults', {
      rules: [{ kind: 'latency', ms: 2_000, path: 'transaction/initiate' }],
    });
    const slow = await api('transaction/initiate', {});
    const fast = await api('sbp/banks', {});
    expect(slow.status).toBe(200);
    expect(slow.ms).toBeGreaterThanOrEqual(1_995);
    // not slowed: a second below the latency, room enough for a slow machine
    expect(fast.ms).toBeLessThan(1_000);
  });

  test('error_5xx with rate 0.5: every second initiate fails, and only the answered ones create sessions', async () => {
    await control('POST', '/sandbox/faults', {
      rules: [{ kind: 'error_5xx', status: 500, rate: 0.5, path: 'transaction/initiate' }],
    });
    const before = (await control('GET', '/sandbox/stats')).body.stats.sessions as number;
    const statuses: Array<number | null> = [];
    for (let i = 0; i < 4; i++) statuses.push((await api('transaction/initiate', {})).status);
    expect(statuses).toEqual([200, 500, 200, 500]);
    expect((await control('GET', '/sandbox/stats')).body.stats.sessions).toBe(before + 2);
  });

  test('bad rules are refused with 400 naming the field', async () => {
    const res = await control('POST', '/sandbox/faults', { rules: [{ kind: 'webhook_delay' }] });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({
      error_code: 'invalid_request',
      error_description: 'rules.0.ms.not_null',
    });
  });
});

describe('webhooks of real flows', () => {
  test('signed with the service key: the partner verifier accepts every webhook of a payment', async () => {
    const verifyHook = createWebhookVerifier([keys.service.publicPem]);
    const sessionId = await paymentAwaitingApproval();
    await api('transaction/approve', { session_id: sessionId });
    await sink.waitFor(
      (h) => h.body?.type === 'checkout_results' && h.body.session_info.id === sessionId,
      10_000,
    );
    const hooks = sink.ofSession(sessionId);
    expect(hooks.map((h) => h.body.type)).toEqual(['approve_pending', 'checkout_results']);
    for (const h of hooks) {
      const v = verifyHook(h.rawBody, h.headers['x-signature'] as string | undefined);
      expect(v).toMatchObject({ ok: true });
    }
  });

  test('a project with webhooks false gets none; its events are recorded as not_sent', async () => {
    const sessionId = await paymentAwaitingApproval('p_quiet');
    await new Promise((r) => setTimeout(r, 200));
    expect(sink.ofSession(sessionId)).toEqual([]);
    const log = (await control('GET', `/sandbox/webhooks?session_id=${sessionId}`)).body.deliveries;
    expect(log.length).toBeGreaterThan(0);
    expect(log.every((r: { state: string }) => r.state === 'not_sent')).toBe(true);
  });

  test('webhook_drop of approve_pending: never arrives (dropped in the log); the partner can still approve after polling', async () => {
    await control('POST', '/sandbox/faults', {
      rules: [{ kind: 'webhook_drop', eventType: 'approve_pending', times: 1 }],
    });
    const sessionId = await paymentAwaitingApproval();
    await new Promise((r) => setTimeout(r, 100));
    expect(sink.ofSession(sessionId)).toEqual([]);
    const log = (await control('GET', `/sandbox/webhooks?session_id=${sessionId}`)).body.deliveries;
    expect(log).toEqual([expect.objectContaining({ type: 'approve_pending', state: 'dropped', attempt: 0 })]);
    await api('transaction/approve', { session_id: sessionId });
    await sink.waitFor(
      (h) => h.body?.type === 'checkout_results' && h.body.session_info.id === sessionId,
      10_000,
    );
  });

  test('webhook_duplicate and webhook_reorder: checkout_results twice, and after it the held approve_pending', async () => {
    await control('POST', '/sandbox/faults', {
      rules: [
        { kind: 'webhook_reorder', eventType: 'approve_pending', times: 1 },
        { kind: 'webhook_duplicate', eventType: 'checkout_results', times: 1 },
      ],
    });
    const started = await api('transaction/init/checkout', cardCheckout());
    const sessionId = started.body.session_info.id as string;
    await waitUntil(
      async () =>
        (await api('transaction/state', { session_id: sessionId })).body.session_info.payments[0]
          .transaction_status === 'pending',
    );
    await new Promise((r) => setTimeout(r, 100));
    expect(sink.ofSession(sessionId)).toEqual([]); // approve_pending is being held
    await api('transaction/approve', { session_id: sessionId });
    await waitUntil(() => sink.ofSession(sessionId).length === 3);
    expect(sink.ofSession(sessionId).map((h) => h.body.type)).toEqual([
      'checkout_results',
      'checkout_results',
      'approve_pending',
    ]);
  });

  test('webhook retry on the real flow: 503 twice, then delivered; the log shows the attempts', async () => {
    const hooksBefore = sink.received.length;
    sink.respondWith((n) => (n <= hooksBefore + 2 ? 503 : 200));
    try {
      const sessionId = await paymentAwaitingApproval();
      await waitUntil(() => sink.ofSession(sessionId).length === 3);
      const log = (await control('GET', `/sandbox/webhooks?session_id=${sessionId}`)).body.deliveries;
      expect(
        log.map((r: { attempt: number; state: string; httpStatus: number }) => [
          r.attempt,
          r.httpStatus,
          r.state,
        ]),
      ).toEqual([
        [1, 503, 'retrying'],
        [2, 503, 'retrying'],
        [3, 200, 'delivered'],
      ]);
    } finally {
      sink.respondWith(200);
    }
  });
});
