/**
 * Scoped API tokens on a real API over a real stack: a `read` token gets 403 on every route
 * that moves money, decides or administers (the whole route table, client/http/endpoints.ts), and the
 * refused request changed nothing; `payments` cannot administer; every log line of an accepted request
 * names the token's id, never the token; refused requests from one address are cut off with 429.
 */
import { Writable } from 'node:stream';
import { request } from 'undici';
import { buildApi, type PaysagaApi } from '../../api/app';
import { apiToken, createApiToken } from '../../api/api-tokens';
import { endpoints } from '../../client/http/endpoints';
import { apiDepsFor, listenLocally, useApiStack } from './api-stack';

/* eslint-disable @typescript-eslint/no-explicit-any -- answers are inspected field by field */

const read = createApiToken(['read']);
const payments = createApiToken(['read', 'payments']);
const admin = createApiToken(['read', 'payments', 'admin']);

describe('scoped API tokens', () => {
  const stack = useApiStack({ webhooks: false });
  let api: PaysagaApi;
  let url = '';
  const logs: string[] = [];

  beforeAll(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        logs.push(...chunk.toString('utf8').split('\n').filter(Boolean));
        done();
      },
    });
    api = buildApi({
      ...apiDepsFor(stack.stack),
      payments: stack.payments,
      apiTokens: [read, payments, admin].map((t) =>
        apiToken(t.token, t.entry.split(':')[1]!.split('+') as any),
      ),
      authFailures: { maxFailures: 1_000, windowMs: 60_000 },
      logger: { level: 'info', stream: sink },
    });
    url = (await listenLocally(api)).v1Url;
  });
  afterAll(async () => {
    await api?.close();
  });

  const call = async (method: string, path: string, token: string, body?: unknown) => {
    const res = await request(`${url}${path}`, {
      method: method as 'GET',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(method === 'GET' || method === 'DELETE' ? {} : { body: JSON.stringify(body ?? {}) }),
    });
    const text = await res.body.text();
    return { status: res.statusCode, body: text ? JSON.parse(text) : undefined, headers: res.headers };
  };
  const pathOf = (path: string) => path.replace('{id}', 'ps_1');

  it('a read token gets 403 on every money-moving and admin route, and nothing is created', async () => {
    const guarded = Object.entries(endpoints).filter(([, r]) => r.scope !== 'read');
    expect(guarded.length).toBeGreaterThan(20);
    const reference = `scoped-${Date.now()}`;
    for (const [name, r] of guarded) {
      const res = await call(r.method, pathOf(r.path), read.token, {
        reference,
        method: 'card',
        amount: { amount: 100, currency: 'RUB' },
      });
      expect([name, res.status, res.body?.error?.code]).toEqual([name, 403, 'forbidden']);
      expect(res.body.error.message).toContain(`needs the ${r.scope} scope`);
      expect(res.headers['www-authenticate']).toContain('insufficient_scope');
    }
    const found = await call('GET', `/v1/sessions?reference=${reference}`, read.token);
    expect([found.status, found.body.sessions]).toEqual([200, []]);
  });

  it('read routes answer a read token; payments cannot administer; admin can', async () => {
    for (const [name, r] of Object.entries(endpoints).filter(([, e]) => e.scope === 'read')) {
      const res = await call(r.method, pathOf(r.path), read.token);
      expect([name, res.status]).not.toEqual([name, 403]);
    }
    const listing = await call('GET', '/v1/event-endpoints', payments.token);
    expect(listing.status).toBe(403);
    expect((await call('GET', '/v1/event-endpoints', admin.token)).status).toBe(200);
    expect((await call('GET', '/v1/reconciliation', payments.token)).status).toBe(403);
  });

  it('log lines of a request name the token id, never the token', async () => {
    await call('GET', '/v1/sessions?limit=1', payments.token);
    const mine = logs.filter((l) => l.includes(`"tokenId":"${payments.id}"`));
    expect(mine.some((l) => l.includes('"statusCode":200'))).toBe(true);
    // Every line of that request (by its reqId) names the token.
    const reqIds = new Set(mine.map((l) => (JSON.parse(l) as { reqId?: string }).reqId));
    const ofThose = logs.filter((l) => reqIds.has((JSON.parse(l) as { reqId?: string }).reqId));
    expect(ofThose.length).toBeGreaterThanOrEqual(1);
    expect(ofThose.filter((l) => !l.includes(`"tokenId":"${payments.id}"`))).toEqual([]);
    for (const t of [read, payments, admin]) expect(logs.join('\n')).not.toContain(t.token);
  });

  it('an address that keeps getting refused is cut off with 429, even with a valid token', async () => {
    const strict = buildApi({
      ...apiDepsFor(stack.stack),
      apiTokens: [apiToken(admin.token)],
      authFailures: { maxFailures: 5, windowMs: 60_000 },
    });
    try {
      const strictUrl = (await listenLocally(strict)).v1Url;
      const guess = async (token: string) =>
        (await request(`${strictUrl}/v1/sessions`, { headers: { authorization: `Bearer ${token}` } }))
          .statusCode;
      const answers: number[] = [];
      for (let i = 0; i < 8; i++) answers.push(await guess(`guess-${i}-${'x'.repeat(32)}`));
      expect(answers).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);
      expect(await guess(admin.token)).toBe(429);
    } finally {
      await strict.close();
    }
  });
});
