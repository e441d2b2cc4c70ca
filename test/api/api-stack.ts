/**
 * The API under test, both listeners on 127.0.0.1:0, over a real stack (sandbox over HTTP, paysaga
 * worker on the shared Temporal dev server), with the sandbox's webhooks forwarded to the API's public
 * receiver and each card checkout's back_url the API's signed return page. `call` talks plain HTTP
 * with undici (to the public listener for /webhooks and /return, else the internal one); responses
 * never print request bodies.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { request } from 'undici';
import { buildApi, type ApiDeps, type ApiUrls, type PaysagaApi } from '../../api/app';
import { PaymentsClient } from '../../client/payments-client';
import { DeferredReturnUrls, ReturnUrls } from '../../client/return-url';
import { createWebhookVerifier } from '../../provider';
import { jsonOrUndefined } from '../helpers/sandbox';
import { startStack, type StackOptions, type TestStack } from '../helpers/stack';
import { finalView } from '../helpers/final';
import { FRICTIONLESS, rub } from '../helpers/workflow-test';

/* eslint-disable @typescript-eslint/no-explicit-any -- responses are inspected field by field in tests */

export interface HttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  text: string;
}

export interface CallOptions {
  body?: unknown;
  /** exact bytes / text to send (with `contentType`) */
  raw?: string | Buffer;
  contentType?: string;
  /** bearer token; `null` sends none (default: the valid token) */
  token?: string | null;
  idempotencyKey?: string;
  headers?: Record<string, string>;
}

export interface ApiStack {
  stack: TestStack;
  api: PaysagaApi;
  /** The API's PaymentsClient (the stack's, plus the signed back_url of each card checkout). */
  payments: PaymentsClient;
  /** Where /v1 is served (the internal listener). */
  url: string;
  publicUrl: string;
  internalUrl: string;
  token: string;
  /** Signs the return URLs (PAYSAGA_RETURN_SECRETS); empty when the stack runs with `returns: false`. */
  returnSecrets: string[];
  call(method: 'GET' | 'POST' | 'DELETE', path: string, o?: CallOptions): Promise<HttpResponse>;
  close(): Promise<void>;
}

/** Both listeners of `api` on 127.0.0.1, each on a free port. */
export function listenLocally(api: PaysagaApi): Promise<ApiUrls> {
  return api.listen({ public: { host: '127.0.0.1', port: 0 }, internal: { host: '127.0.0.1', port: 0 } });
}

/** A fresh return secret (PAYSAGA_RETURN_SECRETS format). */
export const newReturnSecret = () => randomBytes(32).toString('base64url');

/** Where `call` sends a path: the payer's and the provider's routes are on the public listener. */
const onPublic = (path: string) => path.startsWith('/webhooks/') || path.startsWith('/return');

/** What the API needs from a test stack: its clients, task queue, settings and webhook verifier. */
export function apiDepsFor(
  stack: TestStack,
): Pick<
  ApiDeps,
  'payments' | 'provider' | 'temporal' | 'taskQueue' | 'store' | 'events' | 'settings' | 'verifyWebhook'
> {
  return {
    payments: stack.payments,
    provider: stack.provider,
    temporal: stack.temporal,
    taskQueue: stack.taskQueue,
    store: stack.store,
    events: { signingKeys: stack.signingKeys, outbound: stack.outbound },
    settings: stack.settings,
    verifyWebhook: createWebhookVerifier(stack.serviceKeys),
  };
}

export async function startApiStack(
  opts: StackOptions & { api?: Partial<ApiDeps>; forwardWebhooks?: boolean; returns?: boolean } = {},
): Promise<ApiStack> {
  const stack = await startStack(opts);
  const token = `test-${randomUUID()}`;
  const returnSecrets = opts.returns === false ? [] : [newReturnSecret()];
  // The base of each back_url is the public listener's address, known once it listens.
  const returnUrls = returnSecrets.length > 0 ? new DeferredReturnUrls() : undefined;
  const payments = new PaymentsClient({
    temporal: stack.temporal,
    provider: stack.provider,
    taskQueue: stack.taskQueue,
    store: stack.store,
    settings: stack.settings,
    // The sandbox is the provider's test environment: subscriptions may bill every few seconds.
    providerEnvironment: 'test',
    ...(returnUrls ? { returnUrls } : {}),
  });
  let built: PaysagaApi | undefined;
  try {
    built = buildApi({
      ...apiDepsFor(stack),
      payments,
      apiTokens: [token],
      returnSecrets,
      temporalUiUrl: 'http://127.0.0.1:8233',
      // Tests refuse many requests on purpose, all from 127.0.0.1 (test/api/scopes.test.ts tests the cut-off).
      authFailures: { maxFailures: 1_000_000, windowMs: 60_000 },
      publicRateLimit: { max: 1_000_000, windowMs: 60_000 },
      ...opts.api,
    });
    const { publicUrl, internalUrl, v1Url } = await listenLocally(built);
    returnUrls?.resolve(new ReturnUrls(publicUrl, returnSecrets));
    if (opts.forwardWebhooks !== false) stack.forwardWebhooksTo(`${publicUrl}/webhooks/provider`);
    const api = built;
    return {
      stack,
      api,
      payments,
      url: v1Url,
      publicUrl,
      internalUrl,
      token,
      returnSecrets,
      async call(method, path, o = {}) {
        const headers: Record<string, string> = { ...o.headers };
        if (o.token !== null) headers.authorization = `Bearer ${o.token ?? token}`;
        if (o.idempotencyKey !== undefined) headers['idempotency-key'] = o.idempotencyKey;
        let body: string | Buffer | undefined;
        if (o.raw !== undefined) {
          body = o.raw;
          headers['content-type'] = o.contentType ?? 'application/json';
        } else if (o.body !== undefined) {
          body = JSON.stringify(o.body);
          headers['content-type'] = 'application/json';
        }
        const res = await request(`${onPublic(path) ? publicUrl : v1Url}${path}`, {
          method,
          headers,
          ...(body !== undefined ? { body } : {}),
          headersTimeout: 30_000,
          bodyTimeout: 30_000,
        });
        const text = await res.body.text();
        return { status: res.statusCode, headers: res.headers, body: jsonOrUndefined(text), text };
      },
      async close() {
        stack.forwardWebhooksTo(undefined);
        await api.close();
        await stack.close();
      },
    };
  } catch (err) {
    await built?.close();
    await stack.close();
    throw err;
  }
}

/**
 * One API stack for the test file: started in beforeAll, closed in afterAll. The object returned stands
 * for it (each member reads the running stack), so tests use it as they would startApiStack's result.
 */
export function useApiStack(opts: Parameters<typeof startApiStack>[0] = {}): ApiStack {
  let running: ApiStack | undefined;
  beforeAll(async () => {
    running = await startApiStack(opts);
  });
  afterAll(async () => {
    await running?.close();
  });
  const get = (): ApiStack => {
    if (!running) throw new Error('the API stack is not running (it starts in beforeAll)');
    return running;
  };
  return {
    get stack() {
      return get().stack;
    },
    get api() {
      return get().api;
    },
    get payments() {
      return get().payments;
    },
    get url() {
      return get().url;
    },
    get publicUrl() {
      return get().publicUrl;
    },
    get internalUrl() {
      return get().internalUrl;
    },
    get token() {
      return get().token;
    },
    get returnSecrets() {
      return get().returnSecrets;
    },
    call: (method, path, o) => get().call(method, path, o),
    close: () => get().close(),
  };
}

/** POST /v1/checkouts of a frictionless card with `settings`, waiting up to 15 s; throws unless 201. */
export async function startCheckout(
  s: ApiStack,
  reference: string,
  settings: Record<string, unknown>,
  amount: number,
): Promise<{ sessionId: string; phase: string }> {
  const res = await s.call('POST', '/v1/checkouts?wait=15000', {
    body: {
      method: 'card',
      reference,
      amount: rub(amount),
      card: card(FRICTIONLESS),
      customer: { user_id: 'u1' },
      settings,
    },
  });
  if (res.status !== 201) throw new Error(`checkout answered ${res.status}: ${res.text}`);
  return res.body as { sessionId: string; phase: string };
}

let n = 0;
/** A reference no other test uses (also a valid Idempotency-Key). */
export const ref = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${process.pid}-${++n}`;

export { FRICTIONLESS, THREE_DS, rub } from '../helpers/workflow-test';
/** A card as the API's JSON body carries it. */
export const card = (pan: string) => ({
  card_number: pan,
  card_exp_month: '12',
  card_exp_year: '30',
  card_code: '123',
});

/** The final view of a session's current workflow run. */
export async function finished(s: ApiStack, sessionId: string): Promise<any> {
  return finalView(s.stack.temporal, sessionId);
}

/** Workflows that visibility knows for a reference (proves "nothing was started"). */
export async function workflowsFor(s: ApiStack, reference: string): Promise<number> {
  let count = 0;
  for await (const _wf of s.stack.temporal.workflow.list({ query: `ClientReference = '${reference}'` }))
    count++;
  return count;
}
