/**
 * PaysagaApiClient: a typed client of the paysaga HTTP API for backend services that do not embed
 * paysaga (no Temporal connection, no provider keys), in the manner of stripe-node.
 *
 * One request path (`request`) owns the base URL, the bearer token, JSON, the name of a creating
 * call (the input's `reference`, else a generated UUID sent as Idempotency-Key; the same for every
 * retry of the call, so a retry never creates twice), the per-request timeout, retries with backoff and jitter where
 * safe, and typed errors. Request bodies are never logged nor put into errors: card numbers travel in
 * some (`CardDetails` instances are sent in full, plain objects as they are).
 */
import { randomUUID } from 'node:crypto';
import { Agent, request as undiciRequest, type Dispatcher } from 'undici';
import { serializeRequestBody } from '../../provider/serialize';
import { endpoints as e, type IdParams, type NoParams, type Route } from './endpoints';
import type * as t from './endpoints';
import { PaysagaApiError, PaysagaNetworkError, type CallInfo, type FieldIssue } from './errors';

export interface PaysagaApiClientOptions {
  /** e.g. `https://paysaga.internal:8081` (the API's routes are below `/v1`). */
  baseUrl: string;
  /** One of the API's `PAYSAGA_API_TOKENS`. */
  token: string;
  /** Per request, each retry anew; keep it above `waitMs`. Default 35 s (the API waits at most 25 s). */
  timeoutMs?: number;
  /** Retries after a retryable failure (see `request`). Default 2. */
  maxRetries?: number;
  /** Delay before the first retry, doubled for each next one up to 16x, with jitter. Default 500 ms. */
  retryDelayMs?: number;
  /** Your own undici dispatcher (proxy, interceptors); the client then does not close it. */
  dispatcher?: Dispatcher;
}

export interface RequestOptions {
  timeoutMs?: number;
  maxRetries?: number;
  /** Query string parameters (undefined ones are left out). */
  query?: Record<string, string | number | undefined>;
}

export interface CreateOptions extends RequestOptions {
  /** Early return (`?wait=`, 0 to 25000 ms; the API's default is 5000): answer once the payer's action, a decision point or the result is known. */
  waitMs?: number;
}

/** How the answer came (stripe-node's `lastResponse`). */
export interface ResponseInfo {
  status: number;
  /** `Idempotent-Replayed: true`: an earlier request with the same reference created it. */
  replayed: boolean;
  /** `Location` of what a creating route created (or found). */
  location?: string;
  /** The API's request id, when it sends one (`X-Request-Id`). */
  requestId?: string;
  /** The Idempotency-Key sent (creating routes): the reference of what was created. */
  idempotencyKey?: string;
  /** Requests sent for the call, retries included. */
  attempts: number;
}

/** The answer, with `lastResponse` (not enumerable: JSON and equality see the answer only). */
export type WithResponse<T> = T & { readonly lastResponse: ResponseInfo };

const DEFAULT_TIMEOUT_MS = 35_000;
const DEFAULT_MAX_RETRIES = 2;
const DEFAULT_RETRY_DELAY_MS = 500;
const MAX_RETRY_AFTER_MS = 30_000;
/** Failures before the request left: nothing reached the API. */
const NOT_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

type Outcome =
  | { ok: true; body: object; info: ResponseInfo }
  | { ok: false; error: PaysagaApiError | PaysagaNetworkError; retryAfterMs?: number };

export class PaysagaApiClient {
  readonly baseUrl: string;
  private readonly token: string;
  private readonly timeoutMs: number;
  private readonly maxRetries: number;
  private readonly retryDelayMs: number;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;

  constructor(o: PaysagaApiClientOptions) {
    this.baseUrl = o.baseUrl.replace(/\/+$/, '');
    this.token = o.token;
    this.timeoutMs = o.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.maxRetries = o.maxRetries ?? DEFAULT_MAX_RETRIES;
    this.retryDelayMs = o.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS;
    this.ownsDispatcher = !o.dispatcher;
    this.dispatcher = o.dispatcher ?? new Agent({ keepAliveTimeout: 10_000, connections: 16 });
  }

  readonly checkouts = {
    create: (input: t.CheckoutInput, o?: CreateOptions) => this.request(e.createCheckout, {}, input, o),
  };
  readonly payouts = {
    /** One payout, or a batch (`payouts: [...]`): several in one session, sent one at a time. */
    create: (input: t.PayoutInput, o?: CreateOptions) => this.request(e.createPayout, {}, input, o),
    /** Adds a payout to a payout session that has not ended; the same reference: the same payout. */
    add: (sessionId: string, input: t.SessionPayoutInput, o?: CreateOptions) =>
      this.request(e.addPayout, { id: sessionId }, input, o),
  };
  readonly identityChecks = {
    create: (input: t.IdentityCheckInput, o?: CreateOptions) =>
      this.request(e.createIdentityCheck, {}, input, o),
  };
  readonly fpsBindings = {
    create: (input: t.FpsBindingInput, o?: CreateOptions) => this.request(e.createFpsBinding, {}, input, o),
  };
  readonly sessions = {
    /** A page of sessions by reference, phase, kind, creation time; the next with `cursor: page.next`. */
    list: (search: t.SessionSearch = {}, o?: RequestOptions) =>
      this.request(e.listSessions, {}, undefined, { ...o, query: { ...o?.query, ...searchQuery(search) } }),
    get: (id: string, o?: RequestOptions) => this.request(e.getSession, { id }, undefined, o),
    /**
     * Long poll: the session once its version is above `after` (default: the current one), or as it is
     * when `waitMs` (up to 25000) runs out. Keep `timeoutMs` above `waitMs`.
     */
    waitForChange: (id: string, w: { after?: number; waitMs: number }, o?: RequestOptions) =>
      this.request(e.getSession, { id }, undefined, {
        ...o,
        query: { ...o?.query, wait: w.waitMs, ...(w.after !== undefined ? { after: w.after } : {}) },
      }),
    /** The webhook audit trail: every provider event the session received, how, and what it did. */
    providerEvents: (id: string, o?: RequestOptions) =>
      this.request(e.listProviderEvents, { id }, undefined, o),
    /** Replays the session's recorded provider webhooks (changes nothing already applied). */
    replayProviderEvents: (id: string, o?: RequestOptions) =>
      this.request(e.replayProviderEvents, { id }, undefined, o),
    /** `payout`: the payout of a session of several this approval is for (409 unless it waits). */
    approve: (id: string, input: t.ApproveInput = {}, o?: RequestOptions) =>
      this.request(e.approveSession, { id }, input, o),
    cancel: (id: string, input: t.SessionCancelInput = {}, o?: RequestOptions) =>
      this.request(e.cancelSession, { id }, input, o),
    finalize: (id: string, input: t.FinalizeInput = {}, o?: RequestOptions) =>
      this.request(e.finalizeSession, { id }, input, o),
    /** Refund a finished payment; `amount` omitted: what is left. The same reference: the same refund. */
    refund: (id: string, input: t.RefundInput = {}, o?: CreateOptions) =>
      this.request(e.createRefund, { id }, input, o),
  };
  readonly subscriptions = {
    create: (input: t.SubscriptionInput, o?: RequestOptions) =>
      this.request(e.createSubscription, {}, input, o),
    list: (search: t.SubscriptionSearch = {}, o?: RequestOptions) =>
      this.request(e.listSubscriptions, {}, undefined, {
        ...o,
        query: { ...o?.query, ...searchQuery(search) },
      }),
    get: (id: string, o?: RequestOptions) => this.request(e.getSubscription, { id }, undefined, o),
    /** `resumeAt` (ISO 8601): resumes on its own then. */
    pause: (id: string, input: t.PauseInput = {}, o?: RequestOptions) =>
      this.request(e.pauseSubscription, { id }, input, o),
    /** `restart: true` bills from now on instead of keeping the billing day. */
    resume: (id: string, input: t.ResumeInput = {}, o?: RequestOptions) =>
      this.request(e.resumeSubscription, { id }, input, o),
    cancel: (id: string, input: t.CancelInput = {}, o?: RequestOptions) =>
      this.request(e.cancelSubscription, { id }, input, o),
    change: (id: string, input: t.SubscriptionChangeInput, o?: RequestOptions) =>
      this.request(e.changeSubscription, { id }, input, o),
    /** Every period with its attempts; `{ status: 'owed' }` lists what is owed. */
    periods: (
      id: string,
      query: { status?: string; after?: number; limit?: number } = {},
      o?: RequestOptions,
    ) =>
      this.request(e.listSubscriptionPeriods, { id }, undefined, {
        ...o,
        query: {
          ...o?.query,
          ...(query.status ? { status: query.status } : {}),
          ...(query.after !== undefined ? { after: String(query.after) } : {}),
          ...(query.limit !== undefined ? { limit: String(query.limit) } : {}),
        },
      }),
    /** Charges owed periods now, one at a time (default: every one owed). */
    collect: (id: string, input: t.CollectInput = {}, o?: RequestOptions) =>
      this.request(e.collectSubscription, { id }, input, o),
    /** Owed periods nobody will collect (default: every one owed). */
    writeOff: (id: string, input: t.WriteOffInput = {}, o?: RequestOptions) =>
      this.request(e.writeOffSubscription, { id }, input, o),
  };
  readonly reconciliation = {
    /** The reconciler's last pass, the pass in progress, totals and latest findings. */
    get: (o?: RequestOptions) => this.request(e.getReconciliation, {}, undefined, o),
  };
  readonly publicTokens = {
    create: (input: t.PublicTokenInput, o?: RequestOptions) =>
      this.request(e.createPublicToken, {}, input, o),
  };
  readonly banks = {
    list: (o?: RequestOptions) => this.request(e.listBanks, {}, undefined, o),
  };
  readonly tokenInfo = {
    get: (input: t.TokenInfoInput, o?: RequestOptions) => this.request(e.getTokenInfo, {}, input, o),
  };
  readonly recurringTokens = {
    disable: (input: t.RecurringTokenDisableInput, o?: RequestOptions) =>
      this.request(e.disableRecurringToken, {}, input, o),
  };
  readonly eventEndpoints = {
    /** The answer carries the endpoint's secret: the only time it is shown. */
    create: (input: t.EventEndpointInput, o?: RequestOptions) =>
      this.request(e.createEventEndpoint, {}, input, o),
    list: (o?: RequestOptions) => this.request(e.listEventEndpoints, {}, undefined, o),
    get: (id: string, o?: RequestOptions) => this.request(e.getEventEndpoint, { id }, undefined, o),
    delete: (id: string, o?: RequestOptions) => this.request(e.deleteEventEndpoint, { id }, undefined, o),
    rotateSecret: (id: string, input: t.RotateSecretInput = {}, o?: RequestOptions) =>
      this.request(e.rotateEventEndpointSecret, { id }, input, o),
  };
  readonly events = {
    /** Oldest first; page with `after: list.next`. */
    list: (query: t.EventListQuery = {}, o?: RequestOptions) =>
      this.request(e.listEvents, {}, undefined, { ...o, query: { ...o?.query, ...query } }),
    get: (id: string, o?: RequestOptions) => this.request(e.getEvent, { id }, undefined, o),
    deliveries: (id: string, o?: RequestOptions) => this.request(e.getEventDeliveries, { id }, undefined, o),
    redeliver: (id: string, input: t.RedeliverInput = {}, o?: RequestOptions) =>
      this.request(e.redeliverEvent, { id }, input, o),
  };

  /**
   * Any route of `endpoints`. Retried (up to `maxRetries`, backoff with jitter, `Retry-After` heeded):
   * an error answer whose envelope says `retryable`; no answer at all (connection failure, reset,
   * timeout) when sending again is safe: a GET or a read, a creating call (the same Idempotency-Key
   * finds what the first request did), or a request that never left. Anything else is thrown at once.
   */
  async request<P extends NoParams | IdParams, B, O>(
    route: Route<P, B, O>,
    params: P,
    body: B,
    o: CreateOptions = {},
  ): Promise<WithResponse<O>> {
    let path = route.path.replace(/\{(\w+)\}/g, (_m, k: string) =>
      encodeURIComponent((params as Record<string, string>)[k] ?? ''),
    );
    const search = new URLSearchParams();
    if (route.wait && o.waitMs !== undefined) search.set('wait', String(o.waitMs));
    for (const [k, v] of Object.entries(o.query ?? {})) if (v !== undefined) search.set(k, String(v));
    if (search.size > 0) path += `?${search.toString()}`;
    const reference = (body as { reference?: unknown } | undefined)?.reference;
    const idempotencyKey = route.creates
      ? typeof reference === 'string'
        ? reference
        : randomUUID()
      : undefined;
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.token}`,
      accept: 'application/json',
    };
    // A body reference names the call by itself (and a bad one is refused naming `reference`); the
    // header carries the key only when the caller gave none.
    if (idempotencyKey && typeof reference !== 'string') headers['idempotency-key'] = idempotencyKey;
    let payload: Buffer | undefined;
    if (body !== undefined) {
      payload = serializeRequestBody(body);
      headers['content-type'] = 'application/json';
    }
    const resendable = route.method === 'GET' || route.creates || route.readOnly === true;
    const maxRetries = o.maxRetries ?? this.maxRetries;
    for (let attempts = 1; ; attempts++) {
      const call: CallInfo = {
        method: route.method,
        path,
        attempts,
        ...(idempotencyKey ? { idempotencyKey } : {}),
      };
      const outcome = await this.attempt(call, headers, payload, resendable, o.timeoutMs ?? this.timeoutMs);
      if (outcome.ok) return withResponse(outcome.body as O, outcome.info);
      if (!outcome.error.retryable || attempts > maxRetries) throw outcome.error;
      await sleep(this.backoff(attempts, outcome.retryAfterMs));
    }
  }

  /** Closes the connections the client opened (not a dispatcher it was given). */
  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }

  private async attempt(
    call: CallInfo,
    headers: Record<string, string>,
    payload: Buffer | undefined,
    resendable: boolean,
    timeoutMs: number,
  ): Promise<Outcome> {
    const signal = AbortSignal.timeout(timeoutMs);
    let status: number;
    let responseHeaders: Record<string, string | string[] | undefined>;
    let text: string;
    try {
      const res = await undiciRequest(`${this.baseUrl}${call.path}`, {
        method: call.method as 'GET' | 'POST' | 'DELETE',
        headers,
        ...(payload ? { body: payload } : {}),
        dispatcher: this.dispatcher,
        signal,
      });
      status = res.statusCode;
      responseHeaders = res.headers;
      text = await res.body.text();
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      const notSent = typeof code === 'string' && NOT_SENT.has(code) && !signal.aborted;
      const error = new PaysagaNetworkError(call, {
        outcomeUnknown: !notSent && call.method !== 'GET',
        timedOut: signal.aborted,
        retryable: notSent || resendable,
        cause: err,
      });
      return { ok: false, error };
    }
    const header = (name: string) => {
      const v = responseHeaders[name];
      return Array.isArray(v) ? v[0] : v;
    };
    const requestId = header('x-request-id') ?? header('request-id');
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    if (status < 400 && typeof json === 'object' && json !== null) {
      const location = header('location');
      const info: ResponseInfo = {
        status,
        replayed: header('idempotent-replayed') === 'true',
        attempts: call.attempts,
        ...(location ? { location } : {}),
        ...(requestId ? { requestId } : {}),
        ...(call.idempotencyKey ? { idempotencyKey: call.idempotencyKey } : {}),
      };
      return { ok: true, body: json, info };
    }
    const envelope = (json as { error?: Record<string, unknown> } | undefined)?.error;
    const retryAfter = Number(header('retry-after'));
    const base = { status, ...(requestId ? { requestId } : {}) };
    const error =
      envelope && typeof envelope.code === 'string'
        ? new PaysagaApiError(call, {
            ...base,
            code: envelope.code,
            message: typeof envelope.message === 'string' ? envelope.message : '',
            fields: Array.isArray(envelope.fields) ? (envelope.fields as FieldIssue[]) : [],
            retryable: envelope.retryable === true,
          })
        : // Not the API's envelope (a proxy in between, or an answer that is not JSON): its text is not
          // quoted. A gateway's 502-504 may be retried where sending again is safe.
          new PaysagaApiError(call, {
            ...base,
            // `status` says which HTTP status came; the code says what kind of answer it was.
            code: status < 400 ? 'invalid_response' : 'not_an_error_envelope',
            message: status < 400 ? 'the answer is not JSON' : 'the answer is not an API error envelope',
            fields: [],
            retryable: resendable && status >= 502 && status <= 504,
          });
    return {
      ok: false,
      error,
      ...(retryAfter >= 0 ? { retryAfterMs: Math.min(retryAfter * 1000, MAX_RETRY_AFTER_MS) } : {}),
    };
  }

  /** Exponential from `retryDelayMs` (at most 16x), with jitter: between half and all of it. */
  private backoff(attempts: number, retryAfterMs?: number): number {
    const exp = this.retryDelayMs * 2 ** Math.min(attempts - 1, 4);
    return Math.max(retryAfterMs ?? 0, exp * (0.5 + Math.random() / 2));
  }
}

/** Search parameters as a query string: several statuses or kinds comma-separated. */
function searchQuery(
  search: t.SessionSearch | t.SubscriptionSearch,
): Record<string, string | number | undefined> {
  const out: Record<string, string | number | undefined> = {};
  for (const [k, v] of Object.entries(search) as [string, unknown][])
    out[k] = Array.isArray(v) ? v.join(',') : (v as string | number | undefined);
  return out;
}

function withResponse<T>(body: T, info: ResponseInfo): WithResponse<T> {
  return Object.defineProperty(body as object, 'lastResponse', {
    value: info,
    enumerable: false,
  }) as WithResponse<T>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
