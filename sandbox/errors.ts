/*
 * Error codes of the sandbox. The spec lists codes but not HTTP statuses; these are the sandbox's choice
 * (README, "Choices"). Codes marked "sandbox" are not in the spec's table ("complete list: not shown").
 */
export const ERROR_HTTP_STATUS = {
  invalid_request: 400,
  idempotency_key_not_supported: 400,
  /** sandbox: missing/unknown project header, missing or wrong signature */
  authentication_failed: 401,
  repository_record_not_found: 404,
  /** sandbox: unknown path or method below /api/v1 */
  endpoint_not_found: 404,
  idempotency_key_params_mismatch: 409,
  idempotency_key_already_exists: 409,
  /** on the payer's FPS pay route after expiry; in operation errors otherwise */
  qr_expired: 409,
  /** sandbox: a request with a non-JSON content type */
  unsupported_media_type: 415,
  /** sandbox: a bug; the request's changes are not guaranteed to be rolled back */
  internal_error: 500,
} as const;

export type RequestErrorCode = keyof typeof ERROR_HTTP_STATUS;

/** Errors inside operations and sessions (never an HTTP answer of their own). */
export const OPERATION_ERRORS = {
  session_cancelled: 'session-level error of every canceled session',
  qr_expired: 'the FPS QR code expired before the payer paid',
  canceled_by_partner: 'sandbox: transaction/cancel',
  three_ds_failed: 'sandbox: wrong code on the 3-D Secure page',
  three_ds_timeout: 'sandbox: the payer did not finish 3-D Secure in time',
  fraud_suspected: 'sandbox: customer.reference thief, canceled at the hold stage',
  insufficient_funds: 'sandbox: customer.reference loser, canceled at the charge of held funds',
  payout_declined: 'sandbox: customer.reference loser on a payout',
  card_declined: 'sandbox: the decline test card',
  recurring_token_inactive: 'sandbox: payment or payout with a disabled recurring token',
  recipient_not_registered: 'sandbox: FPS recipient not registered (identity check, FPS payout)',
} as const;

export type OperationErrorCode = keyof typeof OPERATION_ERRORS;

export class ApiError extends Error {
  readonly httpStatus: number;
  constructor(
    readonly code: RequestErrorCode,
    readonly description: string,
  ) {
    super(`${code}: ${description}`);
    this.httpStatus = ERROR_HTTP_STATUS[code];
  }
}

/**
 * Field names in error descriptions. Fields of user_info are named from inside it, as in the spec's own
 * example `customer.reference.not_blank`; every other field by its full path (`payment_form_config.session_id`).
 */
export function specField(path: string): string {
  return path.startsWith('user_info.') ? path.slice('user_info.'.length) : path;
}

export const invalid = (field: string, rule: string): ApiError =>
  new ApiError('invalid_request', `${specField(field)}.${rule}`);
export const notFound = (field: string): ApiError =>
  new ApiError('repository_record_not_found', specField(field));

export interface ErrorBody {
  error_code: string;
  error_description: string;
}

/** The spec names the error field `error_info` in tables and `error` in examples: both are sent. */
export function errorEnvelope(
  code: string,
  description: string,
): { status: 'error'; error: ErrorBody; error_info: ErrorBody } {
  const error = { error_code: code, error_description: description };
  return { status: 'error', error, error_info: { ...error } };
}
