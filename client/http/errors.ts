/**
 * What a call of PaysagaApiClient fails with. Messages name the method, the path and what the API
 * said; they never carry a request body (card numbers travel in some).
 */

import type { FieldIssue } from '../../common/views';

/** A field the API refused and the rule it breaks (`fields` of the API's error envelope). */
export type { FieldIssue };

/** What every error knows about the call that failed. */
export interface CallInfo {
  method: string;
  /** Path and query, e.g. `/v1/checkouts?wait=5000`. */
  path: string;
  /** The Idempotency-Key the call was sent with (creating routes): send it again as `reference`. */
  idempotencyKey?: string;
  /** Requests sent for the call, retries included. */
  attempts: number;
}

/** Every error of PaysagaApiClient. */
export abstract class PaysagaError extends Error {
  readonly method: string;
  readonly path: string;
  readonly idempotencyKey?: string;
  readonly attempts: number;
  /** Whether sending the call again may succeed (the client has already retried where safe). */
  abstract readonly retryable: boolean;
  protected constructor(call: CallInfo, message: string) {
    super(`${call.method} ${call.path}: ${message}`);
    this.method = call.method;
    this.path = call.path;
    if (call.idempotencyKey !== undefined) this.idempotencyKey = call.idempotencyKey;
    this.attempts = call.attempts;
  }
}

/** The API answered with an error: its status and envelope (`api/README.md`, Errors). */
export class PaysagaApiError extends PaysagaError {
  override name = 'PaysagaApiError';
  readonly status: number;
  /**
   * The envelope's code (api/README.md lists them); for an answer that is not the API's envelope (a
   * proxy in between), `invalid_response` (a 2xx or 3xx that is not JSON) or `not_an_error_envelope`.
   */
  readonly code: string;
  /** The API's own message (`message` adds method, path, status and code). */
  readonly apiMessage: string;
  readonly fields: FieldIssue[];
  readonly retryable: boolean;
  /** The API's request id, when it sends one (`X-Request-Id`). */
  readonly requestId?: string;

  constructor(
    call: CallInfo,
    answer: {
      status: number;
      code: string;
      message: string;
      fields: FieldIssue[];
      retryable: boolean;
      requestId?: string;
    },
  ) {
    const named = answer.fields.map((f) => `${f.field}: ${f.rule}`).join('; ');
    super(call, `${answer.status} ${answer.code}: ${answer.message}${named ? ` (${named})` : ''}`);
    this.status = answer.status;
    this.code = answer.code;
    this.apiMessage = answer.message;
    this.fields = answer.fields;
    this.retryable = answer.retryable;
    if (answer.requestId !== undefined) this.requestId = answer.requestId;
  }
}

/**
 * No answer: the connection failed or was reset, or the per-request timeout passed. When
 * `outcomeUnknown`, the request may have been carried out: send it again with the same reference
 * (`idempotencyKey`) to learn what happened rather than start something new.
 */
export class PaysagaNetworkError extends PaysagaError {
  override name = 'PaysagaNetworkError';
  /** The request may have reached the API and changed something (never for a GET). */
  readonly outcomeUnknown: boolean;
  readonly timedOut: boolean;
  /** Safe to send again: a GET, a read, or a creating call (its Idempotency-Key). */
  readonly retryable: boolean;

  constructor(
    call: CallInfo,
    failure: { outcomeUnknown: boolean; timedOut: boolean; retryable: boolean; cause: unknown },
  ) {
    const what = failure.timedOut
      ? 'no answer within the timeout'
      : `no answer (${causeName(failure.cause)})`;
    let outcome = '';
    if (failure.outcomeUnknown)
      outcome = call.idempotencyKey
        ? `; the outcome is unknown: send it again with reference ${call.idempotencyKey} to learn it`
        : '; the outcome is unknown';
    super(call, `${what}${outcome}`);
    this.outcomeUnknown = failure.outcomeUnknown;
    this.timedOut = failure.timedOut;
    this.retryable = failure.retryable;
    this.cause = failure.cause;
  }
}

/** The cause's code or class, never its message. */
function causeName(cause: unknown): string {
  const e = cause as { code?: unknown; name?: unknown } | undefined;
  if (typeof e?.code === 'string') return e.code;
  return typeof e?.name === 'string' ? e.name : 'network error';
}
