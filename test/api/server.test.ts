/**
 * startApiFromEnv and `paysaga api`: everything from environment variables, a real round trip through
 * the configured provider and Temporal, clean shutdown on a signal; the codec routes for the Temporal UI.
 */
import { EventEmitter } from 'node:events';
import { Agent, request } from 'undici';
import { buildApi } from '../../api/app';
import { startApiFromEnv } from '../../api/server';
import { runApi } from '../../cli/commands/api';
import { EncryptionCodec, generateCodecKeySpec, parseCodecKeys } from '../../common/codec';
import { startStack, type TestStack } from '../helpers/stack';
import { testAddress, testNamespace } from '../helpers/temporal';
import { apiDepsFor, card, FRICTIONLESS, ref, rub } from './api-stack';
import { finalView } from '../helpers/final';

jest.setTimeout(60_000);

let stack: TestStack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  stack.forwardWebhooksTo(undefined);
  await stack?.close();
});

function envOf(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const k = stack.sandbox.keys.paths;
  return {
    TEMPORAL_ADDRESS: testAddress(),
    TEMPORAL_NAMESPACE: testNamespace(),
    PAYSAGA_TASK_QUEUE: stack.taskQueue,
    PAYSAGA_PROVIDER_URL: stack.sandbox.url,
    PAYSAGA_PROJECT_ID: stack.sandbox.projectId,
    PAYSAGA_PARTNER_PRIVATE_KEY: k.partnerPrivate,
    PAYSAGA_PROVIDER_TEST_SERVICE_KEYS: k.servicePublic,
    PAYSAGA_API_TOKENS: 'one, two',
    PAYSAGA_API_PORT: '0',
    PAYSAGA_LOG_LEVEL: 'silent',
    PAYSAGA_TEMPORAL_UI_URL: 'http://ui.example:8233/',
    ...extra,
  };
}

async function json(
  url: string,
  init: { method?: 'GET' | 'POST'; body?: unknown; headers?: Record<string, string> } = {},
) {
  const res = await request(url, {
    method: init.method ?? 'GET',
    headers: { ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}), ...init.headers },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  return { status: res.statusCode, body: (await res.body.json()) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
}

describe('startApiFromEnv', () => {
  it('serves a checkout end to end with webhooks, then closes', async () => {
    const api = await startApiFromEnv(envOf());
    try {
      stack.forwardWebhooksTo(`${api.url}/webhooks/provider`);
      expect((await json(`${api.url}/healthz`)).status).toBe(200);
      const res = await json(`${api.url}/v1/checkouts?wait=15000`, {
        method: 'POST',
        headers: { authorization: 'Bearer two', 'idempotency-key': ref('env') },
        body: { method: 'card', amount: rub(300), card: card(FRICTIONLESS), customer: { user_id: 'u1' } },
      });
      expect(res.status).toBe(201);
      expect(res.body.links.temporal).toBe(
        `http://ui.example:8233/namespaces/${testNamespace()}/workflows/${res.body.sessionId}`,
      );
      const done = await finalView(stack.temporal, res.body.sessionId as string);
      expect(done.phase).toBe('succeeded');
    } finally {
      stack.forwardWebhooksTo(undefined);
      await api.close();
    }
    await expect(request(`${api.url}/healthz`)).rejects.toThrow();
  });

  it.each([
    ['PAYSAGA_API_TOKENS', { PAYSAGA_API_TOKENS: '' }, /PAYSAGA_API_TOKENS/],
    ['service keys', { PAYSAGA_PROVIDER_TEST_SERVICE_KEYS: '' }, /PAYSAGA_PROVIDER_TEST_SERVICE_KEYS/],
    ['project id', { PAYSAGA_PROJECT_ID: '' }, /projectId/],
    ['port', { PAYSAGA_API_PORT: 'eighty' }, /PAYSAGA_API_PORT/],
    ['return URL', { PAYSAGA_RETURN_URL: 'not a url' }, /Invalid URL/],
  ])('refuses to start without a valid %s', async (_name, extra, message) => {
    await expect(startApiFromEnv(envOf(extra))).rejects.toThrow(message);
  });
});

describe('paysaga api', () => {
  it('runs until SIGTERM, then stops cleanly', async () => {
    const signals = new EventEmitter();
    const out: string[] = [];
    const running = runApi(
      { port: '0', host: '127.0.0.1' },
      { signals, out: (l) => out.push(l), err: (l) => out.push(l), env: envOf() },
    );
    const deadline = Date.now() + 15_000;
    while (!out.some((l) => l.includes('listening')) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    const url = /listening on (\S+)/.exec(out.join('\n'))?.[1];
    expect(url).toBeDefined();
    expect((await json(`${url}/healthz`)).status).toBe(200);
    signals.emit('SIGTERM');
    await running;
    expect(out).toContain('api: stopped');
  });
});

describe('codec routes', () => {
  it('decode reverses encode for the Temporal UI; needs the codec token; CORS for the UI origin only', async () => {
    const codec = new EncryptionCodec(parseCodecKeys(generateCodecKeySpec('k1')));
    const app = buildApi({
      ...apiDepsFor(stack),
      apiTokens: ['t'],
      codec,
      codecTokens: ['staff'],
      codecCorsOrigins: ['http://ui.example:8233'],
    });
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const plain = {
        metadata: { encoding: Buffer.from('json/plain').toString('base64') },
        data: Buffer.from('{"a":1}').toString('base64'),
      };
      const auth = { authorization: 'Bearer staff', origin: 'http://ui.example:8233' };
      expect(
        (await json(`${url}/codec/encode`, { method: 'POST', body: { payloads: [plain] } })).status,
      ).toBe(401);
      const enc = await json(`${url}/codec/encode`, {
        method: 'POST',
        body: { payloads: [plain] },
        headers: auth,
      });
      expect(enc.status).toBe(200);
      expect(Buffer.from(enc.body.payloads[0].metadata.encoding, 'base64').toString()).toBe(
        'binary/encrypted',
      );
      const dec = await json(`${url}/codec/decode`, { method: 'POST', body: enc.body, headers: auth });
      expect(dec.body.payloads).toEqual([plain]);
      const pre = await request(`${url}/codec/decode`, {
        method: 'OPTIONS',
        headers: { origin: 'http://ui.example:8233' },
      });
      await pre.body.dump();
      expect(pre.statusCode).toBe(204);
      expect(pre.headers['access-control-allow-origin']).toBe('http://ui.example:8233');
      const other = await request(`${url}/codec/decode`, {
        method: 'OPTIONS',
        headers: { origin: 'http://evil.example' },
      });
      await other.body.dump();
      expect(other.headers['access-control-allow-origin']).toBeUndefined();
    } finally {
      await app.close();
    }
  });
});

describe('closing the API', () => {
  it('lets a running request finish and closes at once after it, without waiting on keep-alive', async () => {
    const app = buildApi({ ...apiDepsFor(stack), apiTokens: ['t'] });
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    // The checkout's transaction/initiate is held 1.5 s at the provider: the request is running
    // when the close begins.
    await stack.sandbox.plain('POST', '/sandbox/faults', {
      rules: [{ kind: 'latency', path: 'transaction/initiate', ms: 1_500, times: 1 }],
    });
    const agent = new Agent({ keepAliveTimeout: 120_000 });
    try {
      const running = request(`${url}/v1/checkouts?wait=0`, {
        dispatcher: agent,
        method: 'POST',
        headers: { authorization: 'Bearer t', 'content-type': 'application/json' },
        body: JSON.stringify({
          method: 'card',
          reference: ref('drain'),
          amount: rub(700),
          card: card(FRICTIONLESS),
          customer: { user_id: 'u-drain' },
        }),
      });
      await new Promise((r) => setTimeout(r, 500));
      const closing = app.close();
      const res = await running;
      expect(res.statusCode).toBe(201);
      expect(res.headers.connection).toBe('close');
      await res.body.dump();
      // Without `Connection: close` the socket would stay open for fastify's 72 s keep-alive and the
      // close would wait for it; the generous bound only tells "promptly" from that.
      const closed = await Promise.race([
        closing.then(() => 'closed'),
        new Promise((r) => setTimeout(() => r('still open'), 20_000)),
      ]);
      expect(closed).toBe('closed');
    } finally {
      await stack.sandbox.plain('DELETE', '/sandbox/faults');
      await agent.close();
      await app.close();
    }
  });
});
