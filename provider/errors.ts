/**
 * Every failure of a provider call is one of these. Each says what happened and whether
 * sending again can help (`retryable`), so callers (activities) choose a policy by class.
 */
export abstract class PaysagaProviderError extends Error {
  abstract readonly retryable: boolean;
  constructor(
    message: string,
    readonly endpoint: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** Retrying cannot help: `invalid_request` etc. These codes are final by the spec's meaning. */
const FINAL_CODES = new Set([
  'invalid_request',
  'idempotency_key_params_mismatch',
  'repository_record_not_found',
  'idempotency_key_not_supported',
  'qr_expired',
  'session_cancelled',
]);
/** The first request with this key is still being processed: asking again later is the right move. */
const RETRY_CODES = new Set(['idempotency_key_already_exists']);

export function isRetryableErrorCode(code: string, httpStatus?: number): boolean {
  if (RETRY_CODES.has(code)) return true;
  if (FINAL_CODES.has(code)) return false;
  return httpStatus !== undefined && (httpStatus >= 500 || httpStatus === 429);
}

/** The provider answered `status: error` (or an HTTP error without a usable envelope). */
export class ProviderError extends PaysagaProviderError {
  readonly retryable: boolean;
  constructor(
    endpoint: string,
    readonly errorCode: string,
    readonly description: string,
    readonly httpStatus?: number,
  ) {
    super(
      `${endpoint} failed: ${errorCode}${description ? ` (${description})` : ''}` +
        (httpStatus ? ` [HTTP ${httpStatus}]` : ''),
      endpoint,
    );
    this.retryable = isRetryableErrorCode(errorCode, httpStatus);
  }
}

/** The request was refused before it was sent: it names the field and the rule. Never retryable. */
export class ProviderValidationError extends PaysagaProviderError {
  readonly retryable = false;
  constructor(
    endpoint: string,
    readonly fields: string[],
  ) {
    super(`invalid request for ${endpoint}: ${fields.join(', ')}`, endpoint);
  }
}

/** The request never reached the provider (connection refused, DNS): sending again is safe. */
export class ProviderUnavailableError extends PaysagaProviderError {
  readonly retryable = true;
  constructor(endpoint: string, cause: string) {
    super(`${endpoint} not sent: ${cause}`, endpoint);
  }
}

/**
 * The request was sent but no answer came (timeout, connection reset). The provider may or may
 * not have acted: reconcile through transaction/state before sending a money-moving call again.
 */
export class ProviderOutcomeUnknownError extends PaysagaProviderError {
  readonly retryable = false;
  constructor(endpoint: string, cause: string) {
    super(
      `${endpoint} outcome unknown: ${cause}; reconcile with transaction/state before resending`,
      endpoint,
    );
  }
}

/** The provider answered ok but the body does not match the spec's shape. */
export class ProviderResponseError extends PaysagaProviderError {
  readonly retryable = false;
  constructor(
    endpoint: string,
    readonly httpStatus: number,
    detail: string,
  ) {
    super(`${endpoint} returned an unexpected response [HTTP ${httpStatus}]: ${detail}`, endpoint);
  }
}
