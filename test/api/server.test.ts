/**
 * startApiFromEnv and `paysaga api`: everything from environment variables (two listeners, the payer's
 * return), a real round trip through the configured provider and Temporal, clean shutdown on a signal;
 * the codec routes for the Temporal UI, refused off loopback without a token.
 */
import { EventEmitter } from 'node:events';
import { Agent, request } from 'undici';
import { buildApi } from '../../api/app';
import { startApiFromEnv } from '../../api/server';
import { runApi } from '../../cli/commands/api';
import { EncryptionCodec, generateCodecKeySpec, parseCodecKeys } from '../../platform/codec';
import { startStack, type TestStack } from '../helpers/stack';
import { finalView } from '../helpers/final';
import { testAddress, testNamespace } from '../helpers/temporal';
import { returnToken, verifyReturnToken } from '../../platform/return-token';
import { completeThreeDs } from '../helpers/payer';
import {
  apiDepsFor,
  card,
  FRICTIONLESS,
  listenLocally,
  newReturnSecret,
  ref,
  rub,
  THREE_DS,
} from './api-stack';

/** Two API tokens as PAYSAGA_API_TOKENS lists them (at least 32 characters each). */
const ONE = `one-${'1'.repeat(32)}`;
const TWO = `two-${'2'.repeat(32)}`;

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
    PAYSAGA_API_TOKENS: `${ONE}, ${TWO}:read+payments`,
    PAYSAGA_PUBLIC_PORT: '0',
    PAYSAGA_INTERNAL_PORT: '0',
    PAYSAGA_LOG_LEVEL: 'silent',
    PAYSAGA_ALLOW_UNENCRYPTED: 'true',
    PAYSAGA_TEMPORAL_UI_URL: 'http://ui.example:8233/',
    PAYSAGA_DATABASE_URL: stack.store.config.url,
    PAYSAGA_DATABASE_SCHEMA: stack.store.config.schema,
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
      expect(api.url).toBe(api.internalUrl);
      expect(api.publicUrl).not.toBe(api.internalUrl);
      stack.forwardWebhooksTo(`${api.publicUrl}/webhooks/provider`);
      expect((await json(`${api.internalUrl}/healthz`)).status).toBe(200);
      const res = await json(`${api.url}/v1/checkouts?wait=15000`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TWO}`, 'idempotency-key': ref('env') },
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
    await expect(request(`${api.internalUrl}/healthz`)).rejects.toThrow();
    await expect(request(`${api.publicUrl}/webhooks/provider`)).rejects.toThrow();
  });

  it('PAYSAGA_PUBLIC_URL and PAYSAGA_RETURN_SECRETS: each 3-D Secure back_url is the signed return page', async () => {
    const secret = newReturnSecret();
    const publicBase = 'https://pay.example.com/paysaga';
    const api = await startApiFromEnv(
      envOf({ PAYSAGA_PUBLIC_URL: publicBase, PAYSAGA_RETURN_SECRETS: `${secret}, ${newReturnSecret()}` }),
    );
    try {
      expect(api.returnBaseUrl).toBe(publicBase);
      const res = await json(`${api.url}/v1/checkouts?wait=15000`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ONE}`, 'idempotency-key': ref('signed') },
        body: { method: 'card', amount: rub(900), card: card(THREE_DS), customer: { user_id: 'u1' } },
      });
      expect(res.status).toBe(201);
      const id = res.body.sessionId as string;
      const backUrl = new URL(res.body.lastSnapshot.payments[0].payment_settings.back_url);
      expect(`${backUrl.origin}${backUrl.pathname}`).toBe(`${publicBase}/return/${id}`);
      expect(verifyReturnToken([secret], id, backUrl.searchParams.get('t'))).toBe(true);
      // The page answers at the listener for the token the first secret minted.
      const page = await request(`${api.publicUrl}/return/${id}?t=${returnToken(secret, id)}`);
      expect(page.statusCode).toBe(200);
      await page.body.dump();
      await completeThreeDs(res.body.userAction, '00000'); // ends the session
    } finally {
      await api.close();
    }
  });

  it.each([
    [
      'PAYSAGA_API_TOKENS',
      { PAYSAGA_API_TOKENS: '' },
      new Error(
        'PAYSAGA_API_TOKENS is not set: give one or more tokens, comma-separated (paysaga token create --scope ...)',
      ),
    ],
    [
      'a 20-character token',
      { PAYSAGA_API_TOKENS: 'a'.repeat(20) },
      new Error(
        'PAYSAGA_API_TOKENS entry 1: a token of 20 characters is too weak; at least 32 (paysaga token create makes one)',
      ),
    ],
    [
      'no codec keys, not allowed',
      { PAYSAGA_ALLOW_UNENCRYPTED: '' },
      new Error(
        'paysaga api: PAYSAGA_CODEC_KEYS is not set, so payloads would be stored in Temporal unencrypted; give keys (id:base64(32 bytes), e.g. k1:$(openssl rand -base64 32)) or set PAYSAGA_ALLOW_UNENCRYPTED=true',
      ),
    ],
    [
      'an unknown scope',
      { PAYSAGA_API_TOKENS: `${ONE}:read+refund` },
      new Error('PAYSAGA_API_TOKENS entry 1: unknown scope "refund" (one or more of read, payments, admin)'),
    ],
    [
      'service keys',
      { PAYSAGA_PROVIDER_TEST_SERVICE_KEYS: '' },
      new Error(
        'no service public key for the test environment: set PAYSAGA_PROVIDER_TEST_SERVICE_KEYS (paths or PEM, comma-separated)',
      ),
    ],
    [
      'project id',
      { PAYSAGA_PROJECT_ID: '' },
      new Error(
        'provider configuration from environment is invalid: projectId: Too small: expected string to have >=1 characters',
      ),
    ],
    [
      'public port',
      { PAYSAGA_PUBLIC_PORT: 'eighty' },
      new Error('PAYSAGA_PUBLIC_PORT must be an integer 0..65535, got eighty'),
    ],
    [
      'internal port',
      { PAYSAGA_INTERNAL_PORT: '70000' },
      new Error('PAYSAGA_INTERNAL_PORT must be an integer 0..65535, got 70000'),
    ],
    [
      'v1 listener',
      { PAYSAGA_V1_LISTENER: 'both' },
      new Error('PAYSAGA_V1_LISTENER must be internal or public, got both'),
    ],
    [
      'return URL',
      { PAYSAGA_RETURN_URL: 'not a url' },
      new Error('PAYSAGA_RETURN_URL is not a URL: not a url'),
    ],
    [
      'public URL',
      { PAYSAGA_PUBLIC_URL: 'ftp://x', PAYSAGA_RETURN_SECRETS: 'x'.repeat(32) },
      new Error('PAYSAGA_PUBLIC_URL must be http(s): ftp://x'),
    ],
    [
      'public URL with its secrets',
      { PAYSAGA_PUBLIC_URL: 'https://pay.example' },
      new Error(
        'PAYSAGA_PUBLIC_URL is set but PAYSAGA_RETURN_SECRETS is not: give one or more secrets (comma-separated, the first signs) so that each back_url can be bound to its session',
      ),
    ],
    [
      'return secrets with a public URL',
      { PAYSAGA_RETURN_SECRETS: 'x'.repeat(32) },
      new Error(
        'PAYSAGA_RETURN_SECRETS is set but PAYSAGA_PUBLIC_URL is not: set it to the base URL at which the provider and payers reach the public listener (e.g. https://pay.example.com)',
      ),
    ],
    [
      'return secret',
      { PAYSAGA_PUBLIC_URL: 'https://pay.example', PAYSAGA_RETURN_SECRETS: 'short' },
      new Error('PAYSAGA_RETURN_SECRETS: every secret must be at least 16 characters (use 32 random bytes)'),
    ],
    [
      'PAYSAGA_API_PORT (removed)',
      { PAYSAGA_API_PORT: '8080' },
      new Error(
        'PAYSAGA_API_PORT is no longer read: the API listens twice, set PAYSAGA_PUBLIC_PORT (webhooks, payer returns) and PAYSAGA_INTERNAL_PORT (/v1, docs, metrics, codec) instead (api/README.md)',
      ),
    ],
    [
      'PAYSAGA_API_HOST (removed)',
      { PAYSAGA_API_HOST: '0.0.0.0' },
      new Error(
        'PAYSAGA_API_HOST is no longer read: the API listens twice, set PAYSAGA_PUBLIC_HOST and PAYSAGA_INTERNAL_HOST instead (api/README.md)',
      ),
    ],
  ])('refuses to start without a valid %s', async (_name, extra, message) => {
    await expect(startApiFromEnv(envOf(extra))).rejects.toThrow(message);
  });

  it('refuses a codec without a token off loopback, naming PAYSAGA_CODEC_TOKENS; allows it on loopback', async () => {
    const codecKeys = generateCodecKeySpec('k1');
    for (const host of ['0.0.0.0', '::', '192.0.2.10', 'paysaga-api']) {
      await expect(
        startApiFromEnv(envOf({ PAYSAGA_CODEC_KEYS: codecKeys, PAYSAGA_INTERNAL_HOST: host })),
      ).rejects.toThrow(
        new Error(
          `the codec server (/codec, on with PAYSAGA_CODEC_KEYS) would be open on ${host}, which is not loopback: set PAYSAGA_CODEC_TOKENS (bearer tokens the Temporal UI or CLI send), or keep PAYSAGA_INTERNAL_HOST on 127.0.0.1`,
        ),
      );
    }
    const api = await startApiFromEnv(envOf({ PAYSAGA_CODEC_KEYS: codecKeys }));
    try {
      const res = await json(`${api.internalUrl}/codec/decode`, { method: 'POST', body: {} });
      expect(res).toEqual({ status: 200, body: { payloads: [] } });
    } finally {
      await api.close();
    }
  });
});

describe('paysaga api', () => {
  it('runs until SIGTERM, then stops cleanly', async () => {
    const signals = new EventEmitter();
    const out: string[] = [];
    const running = runApi(
      { publicPort: '0', internalPort: '0', publicHost: '127.0.0.1', internalHost: '127.0.0.1' },
      { signals, out: (l) => out.push(l), err: (l) => out.push(l), env: envOf() },
    );
    const deadline = Date.now() + 15_000;
    while (!out.some((l) => l.includes('partner routes')) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    const internal = /internal listener on (\S+)/.exec(out.join('\n'))?.[1];
    const pub = /public listener on (\S+)/.exec(out.join('\n'))?.[1];
    expect(internal).toBeDefined();
    expect(pub).toBeDefined();
    expect((await json(`${internal}/healthz`)).status).toBe(200);
    expect((await json(`${pub}/healthz`)).status).toBe(404);
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
    const { internalUrl: url } = await listenLocally(app);
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
      // A metadata key `__proto__` is refused, whatever its value: read without it, its value would
      // go unchecked (the document says so with each object's `propertyNames`).
      const proto = JSON.parse(
        `{"payloads":[{"metadata":{"__proto__":"not base64!","encoding":"${plain.metadata.encoding}"},"data":"${plain.data}"}]}`,
      );
      expect(await json(`${url}/codec/decode`, { method: 'POST', body: proto, headers: auth })).toEqual({
        status: 400,
        body: {
          error: {
            code: 'invalid_request',
            message: 'invalid input',
            fields: [
              {
                field: 'payloads.0.metadata.__proto__',
                rule: 'no object in a request body may have this key',
              },
            ],
            retryable: false,
          },
        },
      });
      // What the Temporal CLI and UI send when there is nothing to code (protobuf JSON leaves the
      // empty list out), and an empty body.
      for (const op of ['encode', 'decode']) {
        expect(await json(`${url}/codec/${op}`, { method: 'POST', body: {}, headers: auth })).toEqual({
          status: 200,
          body: { payloads: [] },
        });
      }
      const empty = await request(`${url}/codec/decode`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
      });
      expect(empty.statusCode).toBe(200);
      expect(await empty.body.json()).toEqual({ payloads: [] });
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
    const { v1Url: url } = await listenLocally(app);
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
