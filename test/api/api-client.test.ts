/**
 * PaysagaApiClient (client/http) against the real API over HTTP: sessions created and replayed by
 * reference, errors as PaysagaApiError (400 fields, 401) sent once, a creating call whose answer was
 * lost retried with the same Idempotency-Key (one session, one charge), a lost approve not resent,
 * refunds, approve and subscriptions. Requests are counted by an undici interceptor on the client's
 * dispatcher, or by a small proxy between the client and the API that can drop an answer.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { Agent, request } from 'undici';
import {
  PaysagaApiClient,
  PaysagaApiError,
  PaysagaNetworkError,
  type CheckoutInput,
  type Session,
} from '../../client/http';
import { card, FRICTIONLESS, ref, rub, useApiStack } from './api-stack';

jest.setTimeout(60_000);

const s = useApiStack();

const customer = { user_id: 'api-client' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const FINAL = ['succeeded', 'failed', 'canceled'];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const cardCheckout = (extra: Partial<Extract<CheckoutInput, { method: 'card' }>> = {}): CheckoutInput => ({
  method: 'card',
  amount: rub(1_500),
  card: card(FRICTIONLESS),
  customer,
  ...extra,
});

interface Sent {
  method: string;
  path: string;
  idempotencyKey?: string;
}

/** Every request that leaves through this dispatcher is recorded (method, path, Idempotency-Key). */
function countingAgent(): { agent: Agent; dispatcher: ReturnType<Agent['compose']>; sent: Sent[] } {
  const sent: Sent[] = [];
  const agent = new Agent();
  const dispatcher = agent.compose((dispatch) => (opts, handler) => {
    const key = (opts.headers as Record<string, string> | undefined)?.['idempotency-key'];
    sent.push({ method: opts.method, path: opts.path, ...(key ? { idempotencyKey: key } : {}) });
    return dispatch(opts, handler);
  });
  return { agent, dispatcher, sent };
}

/**
 * Forwards everything to the API and records it; `dropNext(method, path)` makes the next matching
 * request go through to the API, then closes the client's connection instead of answering.
 */
async function startProxy(target: string) {
  const seen: Sent[] = [];
  const upstreamAgent = new Agent();
  let drop: { method: string; path: string } | undefined;
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const key = req.headers['idempotency-key'];
    seen.push({
      method: req.method!,
      path: req.url!,
      ...(typeof key === 'string' ? { idempotencyKey: key } : {}),
    });
    const headers = { ...req.headers };
    delete headers.host;
    delete headers.connection;
    const upstream = await request(`${target}${req.url}`, {
      dispatcher: upstreamAgent,
      method: req.method as 'GET' | 'POST',
      headers,
      ...(chunks.length ? { body: Buffer.concat(chunks) } : {}),
    });
    const body = Buffer.from(await upstream.body.arrayBuffer());
    if (drop && req.method === drop.method && req.url!.split('?')[0] === drop.path) {
      drop = undefined;
      req.socket.destroy(); // the API has done it; the client never hears
      return;
    }
    const out: http.OutgoingHttpHeaders = {};
    for (const [k, v] of Object.entries(upstream.headers))
      if (!['connection', 'keep-alive', 'transfer-encoding', 'content-length'].includes(k)) out[k] = v;
    res.writeHead(upstream.statusCode, out).end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    dropNext(method: string, path: string) {
      drop = { method, path };
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await upstreamAgent.close();
    },
  };
}

let counting: ReturnType<typeof countingAgent>;
let client: PaysagaApiClient;
let proxy: Awaited<ReturnType<typeof startProxy>>;
let proxied: PaysagaApiClient;

/** Reads the session until `done` (default: it has ended), for up to 30 s. */
async function settled(
  id: string,
  done: (v: Session) => boolean = (v) => FINAL.includes(v.phase),
): Promise<Session> {
  for (const deadline = Date.now() + 30_000; ; await sleep(200)) {
    const view = await client.sessions.get(id);
    if (done(view) || Date.now() > deadline) return view;
  }
}

const charges = async (sessionId: string) =>
  (await s.stack.sandbox.ledger(sessionId)).entries.filter(
    (e) => e.kind === 'capture' || e.kind === 'charge',
  );

describe('PaysagaApiClient', () => {
  // Inside the describe block, so the clients close before the API stack does (its afterAll runs
  // last): open keep-alive connections would otherwise hold the API's close.
  beforeAll(async () => {
    counting = countingAgent();
    client = new PaysagaApiClient({
      baseUrl: s.url,
      token: s.token,
      dispatcher: counting.dispatcher,
      retryDelayMs: 50,
    });
    proxy = await startProxy(s.url);
    proxied = new PaysagaApiClient({ baseUrl: proxy.url, token: s.token, retryDelayMs: 50 });
  });

  afterAll(async () => {
    await proxied?.close();
    await proxy?.close();
    await counting?.agent.close();
  });

  it('card checkout: 201 with Location; the same reference is replayed (same session); the result', async () => {
    const reference = ref('cli-card');
    const created = await client.checkouts.create(cardCheckout({ reference }), { waitMs: 15_000 });
    expect(created.sessionId).toMatch(/^ps_/);
    expect(created).toMatchObject({
      kind: 'card_checkout',
      reference,
      links: { self: `/v1/sessions/${created.sessionId}` },
    });
    expect(created.lastResponse).toEqual({
      status: 201,
      replayed: false,
      location: `/v1/sessions/${created.sessionId}`,
      idempotencyKey: reference,
      attempts: 1,
    });
    expect(Object.keys(created)).not.toContain('lastResponse');
    expect(JSON.stringify(created)).not.toContain(FRICTIONLESS);

    const done = await settled(created.sessionId);
    expect(done.phase).toBe('succeeded');
    const again = await client.checkouts.create(cardCheckout({ reference }));
    expect(again.sessionId).toBe(created.sessionId);
    expect(again.phase).toBe('succeeded');
    expect(again.lastResponse).toMatchObject({ status: 200, replayed: true, idempotencyKey: reference });
    expect(await charges(created.sessionId)).toHaveLength(1);
  });

  it('400: PaysagaApiError with the fields, not retried, no card number in the error', async () => {
    const before = counting.sent.length;
    const err = await client.checkouts
      .create(cardCheckout({ reference: ref('cli-bad'), amount: { amount: -5, currency: 'rubles' } }))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PaysagaApiError);
    expect(err).toMatchObject({ status: 400, code: 'invalid_request', retryable: false, attempts: 1 });
    const fields = (err as PaysagaApiError).fields.map((f) => f.field);
    expect(fields).toEqual(expect.arrayContaining(['amount.amount', 'amount.currency']));
    const { apiMessage } = err as PaysagaApiError;
    const named = (err as PaysagaApiError).fields.map((f) => `${f.field}: ${f.rule}`).join('; ');
    // The message says the call, the status, the code, the API's words and every field named.
    expect((err as PaysagaApiError).message).toBe(
      `POST /v1/checkouts: 400 invalid_request: ${apiMessage} (${named})`,
    );
    expect(counting.sent.length - before).toBe(1);
    expect(inspect(err)).not.toContain(FRICTIONLESS);
  });

  it('401 with a token the API does not know; an API that cannot be reached', async () => {
    const stranger = new PaysagaApiClient({ baseUrl: s.url, token: 'not-a-token' });
    try {
      const err = await stranger.sessions.get('ps_1').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(PaysagaApiError);
      expect(err).toMatchObject({ status: 401, code: 'unauthorized', retryable: false, attempts: 1 });
    } finally {
      await stranger.close();
    }
    // Nothing listens on port 1: refused before sending, so retried, and no outcome is unknown.
    const nowhere = new PaysagaApiClient({
      baseUrl: 'http://127.0.0.1:1',
      token: s.token,
      maxRetries: 1,
      retryDelayMs: 10,
    });
    try {
      const err = await nowhere.payouts
        .create({
          reference: ref('cli-nowhere'),
          amount: rub(100),
          destination: { type: 'card', card: card(FRICTIONLESS) },
        })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(PaysagaNetworkError);
      expect(err).toMatchObject({ outcomeUnknown: false, timedOut: false, attempts: 2 });
      expect(inspect(err)).not.toContain(FRICTIONLESS);
    } finally {
      await nowhere.close();
    }
  });

  it('the answer of a creating call is lost: the retry reuses the generated Idempotency-Key, one session, one charge', async () => {
    const sessionsBefore = (await s.stack.sandbox.stats()).stats.sessions ?? 0;
    const seenBefore = proxy.seen.length;
    proxy.dropNext('POST', '/v1/checkouts');
    const view = await proxied.checkouts.create(cardCheckout(), { waitMs: 15_000 });
    const sent = proxy.seen.slice(seenBefore).filter((r) => r.path.startsWith('/v1/checkouts'));
    expect(sent).toHaveLength(2);
    expect(sent[0]!.idempotencyKey).toMatch(UUID);
    expect(sent[1]!.idempotencyKey).toBe(sent[0]!.idempotencyKey);
    expect(view.reference).toBe(sent[0]!.idempotencyKey);
    expect(view.lastResponse).toMatchObject({
      status: 200,
      replayed: true,
      attempts: 2,
      idempotencyKey: view.reference,
    });

    expect((await settled(view.sessionId)).phase).toBe('succeeded');
    expect(((await s.stack.sandbox.stats()).stats.sessions ?? 0) - sessionsBefore).toBe(1);
    expect(await charges(view.sessionId)).toHaveLength(1);
  });

  it('approve through the client; a lost approve answer is not resent (outcome unknown)', async () => {
    const manual = { approval: { mode: 'manual' as const, deadlineMs: 30_000 } };
    const waiting = async () => {
      const v = await client.checkouts.create(
        cardCheckout({ reference: ref('cli-appr'), settings: manual }),
        { waitMs: 15_000 },
      );
      expect(v.phase).toBe('awaiting_approval');
      return v.sessionId;
    };

    const id = await waiting();
    const approved = await client.sessions.approve(id);
    expect(approved.sessionId).toBe(id);
    expect((await settled(id)).phase).toBe('succeeded');

    const other = await waiting();
    const seenBefore = proxy.seen.length;
    proxy.dropNext('POST', `/v1/sessions/${other}/approve`);
    const err = await proxied.sessions.approve(other).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PaysagaNetworkError);
    expect(err).toMatchObject({ outcomeUnknown: true, retryable: false, attempts: 1 });
    expect(proxy.seen.length - seenBefore).toBe(1);
    // It did reach the session: approving again is refused, the payment goes on.
    expect(await client.sessions.approve(other).catch((e: PaysagaApiError) => e.code)).toMatch(
      /^(approve_automatic|not_awaiting_approval|decision_in_progress|session_final)$/,
    );
    expect((await settled(other)).phase).toBe('succeeded');
  });

  it('refund: 201, the same reference again is replayed; the refund succeeds', async () => {
    const paid = await client.checkouts.create(
      cardCheckout({ reference: ref('cli-paid'), amount: rub(2_000) }),
      {
        waitMs: 15_000,
      },
    );
    expect((await settled(paid.sessionId)).phase).toBe('succeeded');
    const reference = ref('cli-refund');
    const refund = await client.sessions.refund(
      paid.sessionId,
      { reference, amount: 500 },
      { waitMs: 10_000 },
    );
    expect(refund).toMatchObject({
      sessionId: paid.sessionId,
      kind: 'card_checkout',
      reference: paid.reference,
    });
    expect(refund.refunds).toEqual([expect.objectContaining({ reference, amount: 500 })]);
    expect(refund.lastResponse).toMatchObject({ status: 201, replayed: false, idempotencyKey: reference });
    const again = await client.sessions.refund(paid.sessionId, { reference, amount: 500 });
    expect(again.lastResponse).toMatchObject({ status: 200, replayed: true });
    const done = await settled(paid.sessionId, (v) => v.refunds.some((r) => r.status === 'succeeded'));
    expect(done.phase).toBe('succeeded');
    expect(done.totals).toMatchObject({ captured: paid.money?.amount, refunded: 500 });
    expect((await s.stack.sandbox.ledger(paid.sessionId)).totals.refund).toBe(500);
  });

  it('subscription: create (named by the generated key), get, cancel; banks', async () => {
    const first = await client.checkouts.create(
      cardCheckout({ reference: ref('cli-first'), allowRecurring: true }),
      {
        waitMs: 15_000,
      },
    );
    const paid = await settled(first.sessionId);
    expect(paid.recurringToken).toBeDefined();

    const created = await client.subscriptions.create({
      token: paid.recurringToken!,
      amount: rub(700),
      schedule: { interval: 'hour' },
      customer,
    });
    const key = created.lastResponse.idempotencyKey!;
    expect(key).toMatch(UUID);
    expect(created).toMatchObject({ subscriptionId: `sub-${key}`, reference: key, status: 'active' });
    expect(created.lastResponse).toMatchObject({ status: 201, location: `/v1/subscriptions/sub-${key}` });
    const read = await client.subscriptions.get(created.subscriptionId);
    expect(read).toMatchObject({
      subscriptionId: created.subscriptionId,
      amount: { amount: 700, currency: 'rub' },
    });
    expect(read.links.self).toBe(`/v1/subscriptions/${created.subscriptionId}`);
    const canceled = await client.subscriptions.cancel(created.subscriptionId, { reason: 'test done' });
    expect(canceled.status).toBe('canceled');

    const { banks } = await client.banks.list();
    expect(banks.length).toBeGreaterThan(0);
  });
});
