import type { KeyObject } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request, type Dispatcher } from 'undici';
import { redactPans } from './schemas/card';
import {
  API_PREFIX,
  endpoints,
  IDEMPOTENCY_HEADER,
  type EndpointName,
  type RequestOf,
  type ResponseOf,
} from './schemas/endpoints';
import {
  PaysagaProviderError,
  ProviderError,
  ProviderOutcomeUnknownError,
  ProviderResponseError,
  ProviderUnavailableError,
  ProviderValidationError,
} from './errors';
import { isValidIdempotencyKey } from './idempotency';
import { describeIssues, envelope, errorObject } from './schemas';
import { serializeRequestBody } from './serialize';
import { loadPrivateKey, signBytes, type KeyInput } from './signing';

export interface ProviderLogger {
  debug(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface ProviderClientOptions {
  /** Base address without `/api/v1`, e.g. the sandbox's `http://127.0.0.1:8081`. */
  baseUrl: string;
  projectId: string;
  privateKey: KeyInput;
  /** More projects this client signs for when a call names one (CallOptions.projectId). */
  projects?: { id: string; privateKey: KeyInput }[];
  submerchantId?: string;
  /** Send X-PARTNER-PROJECT / X-PARTNER-SIGN instead of X-Project-Id / X-Signature. */
  legacyHeaders?: boolean;
  /** Per attempt: waiting longer than this for an answer makes the outcome unknown. */
  timeoutMs?: number;
  /** Extra attempts, made only when sending again is safe (see `canResend`). */
  maxRetries?: number;
  retryBaseDelayMs?: number;
  dispatcher?: Dispatcher;
  logger?: ProviderLogger;
}

export interface CallOptions {
  /** Sign for this project (one of `projects`, or the client's own); default the client's own. */
  projectId?: string;
  idempotencyKey?: string;
  submerchantId?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** Errors of undici / node that prove the request never left this machine. */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_CONNECT_TIMEOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

function errorCode(err: unknown): string {
  const e = err as { code?: string; cause?: { code?: string }; name?: string };
  return e?.code ?? e?.cause?.code ?? e?.name ?? 'unknown';
}

/**
 * Typed client of the Payment Session Service. One request path owns validation,
 * serialization, signing, headers, retries and typed errors; endpoint methods are thin.
 */
export class ProviderClient {
  private readonly key: KeyObject;
  private readonly projectKeys = new Map<string, KeyObject>();
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly origin: string;

  constructor(private readonly opts: ProviderClientOptions) {
    this.key = loadPrivateKey(opts.privateKey, 'partner private key');
    for (const p of opts.projects ?? [])
      this.projectKeys.set(p.id, loadPrivateKey(p.privateKey, `private key of project ${p.id}`));
    this.origin = opts.baseUrl.replace(/\/+$/, '');
    this.ownsDispatcher = !opts.dispatcher;
    this.dispatcher = opts.dispatcher ?? new Agent({ keepAliveTimeout: 30_000, connections: 64 });
  }

  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }

  /** Validates `body` against the endpoint's schema; throws ProviderValidationError naming the fields. */
  validate<N extends EndpointName>(name: N, body: RequestOf<N>): unknown {
    const def = endpoints[name];
    const parsed = def.request.safeParse(body ?? {});
    if (!parsed.success)
      throw new ProviderValidationError(def.path, describeIssues(parsed.error, body ?? {}));
    return parsed.data;
  }

  async call<N extends EndpointName>(
    name: N,
    body: RequestOf<N>,
    options: CallOptions = {},
  ): Promise<ResponseOf<N>> {
    const def = endpoints[name];
    const key = options.idempotencyKey;
    if (key !== undefined) {
      if (!def.idempotent)
        throw new ProviderValidationError(def.path, ['X-PARTNER-IDEMPOTENCY-KEY.not_supported']);
      if (!isValidIdempotencyKey(key))
        throw new ProviderValidationError(def.path, ['X-PARTNER-IDEMPOTENCY-KEY.length_4_64']);
    }
    // Serialize once and sign exactly those bytes; retries resend the same bytes.
    const bytes = serializeRequestBody(this.validate(name, body));
    const project = options.projectId ?? this.opts.projectId;
    const signingKey = project === this.opts.projectId ? this.key : this.projectKeys.get(project);
    if (!signingKey)
      throw new ProviderValidationError(def.path, [
        `project ${project} is not configured (PAYSAGA_PROJECTS)`,
      ]);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      [this.opts.legacyHeaders ? 'x-partner-project' : 'x-project-id']: project,
      [this.opts.legacyHeaders ? 'x-partner-sign' : 'x-signature']: signBytes(bytes, signingKey),
    };
    const submerchant = options.submerchantId ?? this.opts.submerchantId;
    if (submerchant) headers['x-submerchant-id'] = submerchant;
    if (key !== undefined) headers[IDEMPOTENCY_HEADER] = key;

    const maxRetries = this.opts.maxRetries ?? 2;
    for (let attempt = 0; ; attempt++) {
      try {
        return (await this.send(
          def.path,
          def.method,
          bytes,
          headers,
          def.response,
          options,
        )) as ResponseOf<N>;
      } catch (err) {
        if (
          !(err instanceof PaysagaProviderError) ||
          attempt >= maxRetries ||
          !this.canResend(name, err, key)
        )
          throw err;
        const delay = (this.opts.retryBaseDelayMs ?? 200) * 2 ** attempt * (0.5 + Math.random() / 2);
        this.opts.logger?.warn(
          { endpoint: def.path, attempt: attempt + 1, error: err.message },
          'provider call retried',
        );
        await sleep(delay, undefined, { signal: options.signal });
      }
    }
  }

  /**
   * Resending is safe when the request never left, or when it cannot move money twice:
   * a read-only method, or a retryable error of a call protected by an idempotency key.
   * An unknown outcome of a money-moving call is never resent here (reconcile first).
   */
  private canResend(name: EndpointName, err: PaysagaProviderError, key: string | undefined): boolean {
    if (err instanceof ProviderUnavailableError) return true;
    const readOnly = !endpoints[name].mutating;
    if (err instanceof ProviderOutcomeUnknownError) return readOnly;
    if (err instanceof ProviderError && err.retryable) return readOnly || key !== undefined;
    return false;
  }

  private async send(
    path: string,
    method: 'GET' | 'POST',
    bytes: Buffer,
    headers: Record<string, string>,
    responseSchema: (typeof endpoints)[EndpointName]['response'],
    options: CallOptions,
  ): Promise<unknown> {
    const timeout = options.timeoutMs ?? this.opts.timeoutMs ?? 30_000;
    const started = Date.now();
    let res: Dispatcher.ResponseData;
    let text: string;
    try {
      res = await request(`${this.origin}${API_PREFIX}/${path}`, {
        method,
        headers,
        body: bytes,
        dispatcher: this.dispatcher,
        headersTimeout: timeout,
        bodyTimeout: timeout,
        signal: options.signal,
      });
      text = await res.body.text();
    } catch (err) {
      const code = errorCode(err);
      if (NOT_SENT_CODES.has(code)) throw new ProviderUnavailableError(path, code);
      throw new ProviderOutcomeUnknownError(path, code);
    }
    this.opts.logger?.debug(
      { endpoint: path, http_status: res.statusCode, ms: Date.now() - started },
      'provider call',
    );
    return parseResponse(path, res.statusCode, text, responseSchema);
  }

  // Endpoint methods: thin, typed names over `call`.
  initiate = (b: RequestOf<'initiate'>, o?: CallOptions) => this.call('initiate', b, o);
  initCheckout = (b: RequestOf<'initCheckout'>, o?: CallOptions) => this.call('initCheckout', b, o);
  initTransfer = (b: RequestOf<'initTransfer'>, o?: CallOptions) => this.call('initTransfer', b, o);
  startCheckout = (b: RequestOf<'startCheckout'>, o?: CallOptions) => this.call('startCheckout', b, o);
  startTransfer = (b: RequestOf<'startTransfer'>, o?: CallOptions) => this.call('startTransfer', b, o);
  approve = (b: RequestOf<'approve'>, o?: CallOptions) => this.call('approve', b, o);
  cancel = (b: RequestOf<'cancel'>, o?: CallOptions) => this.call('cancel', b, o);
  finalize = (b: RequestOf<'finalize'>, o?: CallOptions) => this.call('finalize', b, o);
  refund = (b: RequestOf<'refund'>, o?: CallOptions) => this.call('refund', b, o);
  state = (b: RequestOf<'state'>, o?: CallOptions) => this.call('state', b, o);
  publicToken = (b: RequestOf<'publicToken'>, o?: CallOptions) => this.call('publicToken', b, o);
  publicTokenState = (b: RequestOf<'publicTokenState'>, o?: CallOptions) =>
    this.call('publicTokenState', b, o);
  recurringTokenDisable = (b: RequestOf<'recurringTokenDisable'>, o?: CallOptions) =>
    this.call('recurringTokenDisable', b, o);
  sbpBanks = (o?: CallOptions) => this.call('sbpBanks', {}, o);
  identityCheck = (b: RequestOf<'identityCheck'>, o?: CallOptions) => this.call('identityCheck', b, o);
}

function parseResponse(
  path: string,
  httpStatus: number,
  text: string,
  schema: (typeof endpoints)[EndpointName]['response'],
): unknown {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    if (httpStatus >= 500 || httpStatus === 429)
      throw new ProviderError(path, `http_${httpStatus}`, '', httpStatus);
    throw new ProviderResponseError(path, httpStatus, 'body is not JSON');
  }
  const env = envelope.safeParse(json);
  if (!env.success) {
    if (httpStatus >= 500) throw new ProviderError(path, `http_${httpStatus}`, '', httpStatus);
    throw new ProviderResponseError(path, httpStatus, describeIssues(env.error, json).join(', '));
  }
  if (env.data.status === 'error') {
    const e = errorObject.safeParse(env.data.error_info ?? env.data.error);
    const code = e.success ? e.data.error_code : `http_${httpStatus}`;
    throw new ProviderError(
      path,
      code,
      redactPans(e.success ? (e.data.error_description ?? '') : ''),
      httpStatus,
    );
  }
  if (httpStatus >= 400)
    throw new ProviderError(path, `http_${httpStatus}`, 'status ok with an HTTP error', httpStatus);
  const parsed = schema.safeParse(json);
  if (!parsed.success)
    throw new ProviderResponseError(path, httpStatus, describeIssues(parsed.error, json).join(', '));
  return parsed.data;
}
