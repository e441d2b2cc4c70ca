/**
 * The API's one error shape, and how every error class of paysaga maps onto it. Messages never carry
 * request bodies: zod messages name rules, not values, and provider descriptions are PAN-redacted.
 */
import { ServiceError, WorkflowUpdateRPCTimeoutOrCancelledError } from '@temporalio/client';
import {
  InputValidationError,
  ProviderRefusedError,
  ReferenceBusyError,
  ReferenceConflictError,
  SessionNotFoundError,
  SessionStateError,
} from '../client/errors';
import { refusedField, type ProviderRefusal } from '../common/failures';
import { isStoreUnavailable } from '../store/errors';
import { WorkflowTaskFailingError } from '../client/workflow-health';
import type { ErrorEnvelope, FieldIssue } from '../common/views';
import { EventEndpointNotFoundError, EventNotFoundError, EventStateError } from '../client/event-errors';
import {
  ProviderError,
  ProviderOutcomeUnknownError,
  ProviderResponseError,
  ProviderUnavailableError,
  ProviderValidationError,
} from '../provider/errors';

export type { ErrorEnvelope, FieldIssue } from '../common/views';

/** An error the API answers as is. */
export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
    readonly retryable = false,
    readonly fields?: FieldIssue[],
  ) {
    super(message);
    this.name = 'ApiError';
  }
  toEnvelope(): ErrorEnvelope {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.fields ? { fields: this.fields } : {}),
        retryable: this.retryable,
      },
    };
  }
}

/** `path.rule` strings of the provider client (e.g. `card_tokenize.not_null`), in the API's field names. */
function splitProviderField(s: string): FieldIssue {
  const { field, rule } = refusedField(s);
  return { field: field === '(body)' ? field : apiField(field), rule };
}

/**
 * The API's name of a field the provider names (its paths are those of the provider's bodies): the
 * caller hears about the field it sent. Unknown paths stay as the provider wrote them.
 */
const API_FIELDS: [string, string][] = [
  ['payout_info.account_info.fps_info_verification.bank_identifier', 'bankId'],
  ['payout_info.account_info.fps_info_verification.phone_number', 'phone'],
  ['payment_info.recurring_token_info.token', 'token'],
  ['payout_info.recurring_token_info.token', 'destination.token'],
  ['recurring_token_info.token', 'token'],
  ['participant_info.payee_info', 'payee'],
  ['participant_info', 'participant'],
  ['user_info', 'customer'],
  ['sum_info.sum', 'amount.amount'],
  ['sum_info.currency_code', 'amount.currency'],
];

function apiField(providerPath: string): string {
  for (const [prefix, name] of API_FIELDS)
    if (providerPath === prefix || providerPath.startsWith(`${prefix}.`))
      return name + providerPath.slice(prefix.length);
  return providerPath;
}

/** Decisions and refunds the provider refuses are state conflicts of the session (409). */
const DECIDING = new Set([
  'transaction/approve',
  'transaction/cancel',
  'transaction/finalize',
  'transaction/refund',
]);

/**
 * A refusal by the provider, in the caller's terms: what it sent was wrong (400 naming the field), names
 * nothing the provider knows (404), or cannot be done now (409). Never a 5xx: the provider is well.
 */
function fromRefusal(r: ProviderRefusal): ApiError {
  if (DECIDING.has(r.endpoint))
    return new ApiError(
      409,
      'provider_refused',
      `the provider refused ${r.endpoint}: ${r.errorCode}: ${r.description}`,
    );
  if (r.errorCode === 'invalid_request')
    return new ApiError(400, 'invalid_request', 'the provider refused the request', false, [
      splitProviderField(r.description),
    ]);
  if (r.errorCode === 'repository_record_not_found')
    return new ApiError(404, 'not_found', `the provider knows no such ${apiField(r.description)}`, false, [
      { field: apiField(r.description), rule: 'not found' },
    ]);
  if (r.errorCode === 'idempotency_key_params_mismatch')
    return new ApiError(409, 'reference_conflict', 'the reference was used for another request', false, [
      { field: 'reference', rule: 'already used for another request' },
    ]);
  return new ApiError(409, 'provider_refused', `the provider refused ${r.endpoint}: ${r.errorCode}`);
}

const FASTIFY_4XX: Record<string, [string, string]> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: ['unsupported_media_type', 'unsupported Content-Type'],
  FST_ERR_CTP_BODY_TOO_LARGE: ['body_too_large', 'the request body is too large'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: ['invalid_body', 'Content-Length does not match the body'],
  // Never the parser's own message: V8 quotes the offending input in JSON syntax errors.
  FST_ERR_CTP_INVALID_JSON_BODY: ['invalid_json', 'the request body is not valid JSON'],
  FST_ERR_CTP_EMPTY_JSON_BODY: ['invalid_json', 'the request body is empty'],
};

export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof InputValidationError)
    return new ApiError(400, 'invalid_request', 'invalid input', false, err.fields);
  if (err instanceof ProviderValidationError)
    return new ApiError(400, 'invalid_request', 'invalid input', false, err.fields.map(splitProviderField));
  if (err instanceof SessionNotFoundError) return new ApiError(404, 'session_not_found', err.message);
  if (err instanceof SessionStateError) return new ApiError(409, err.code, err.message);
  if (err instanceof ReferenceConflictError)
    return new ApiError(409, 'reference_conflict', err.message, false, [
      { field: 'reference', rule: err.rule },
    ]);
  if (err instanceof ReferenceBusyError)
    return new ApiError(409, 'reference_in_use', err.message, true, [
      { field: 'reference', rule: 'in use by a request still being carried out' },
    ]);
  if (err instanceof ProviderRefusedError) return fromRefusal(err.refusal);
  if (err instanceof EventNotFoundError) return new ApiError(404, 'event_not_found', err.message);
  if (err instanceof EventEndpointNotFoundError) return new ApiError(404, 'endpoint_not_found', err.message);
  if (err instanceof EventStateError) return new ApiError(409, 'invalid_state', err.message);
  if (err instanceof ProviderOutcomeUnknownError)
    return new ApiError(504, 'outcome_unknown', 'outcome unknown, retry with the same Idempotency-Key', true);
  if (err instanceof ProviderUnavailableError)
    return new ApiError(503, 'provider_unavailable', 'the payment provider cannot be reached', true);
  if (err instanceof ProviderError) {
    if (err.retryable)
      return new ApiError(503, 'provider_unavailable', 'the payment provider is unwell; retry', true);
    return fromRefusal({ endpoint: err.endpoint, errorCode: err.errorCode, description: err.description });
  }
  if (err instanceof ProviderResponseError)
    return new ApiError(502, 'provider_bad_response', 'the payment provider answered unexpectedly');
  if (err instanceof WorkflowTaskFailingError) return new ApiError(503, 'session_failing', err.message, true);
  if (err instanceof WorkflowUpdateRPCTimeoutOrCancelledError)
    return new ApiError(504, 'timeout', 'the session did not answer in time; retry', true);
  if (isStoreUnavailable(err))
    return new ApiError(503, 'store_unavailable', "paysaga's store cannot be reached", true);
  if (err instanceof ServiceError)
    return new ApiError(503, 'temporal_unavailable', 'Temporal cannot be reached', true);
  const e = err as { statusCode?: number; code?: string; message?: string };
  if (typeof e?.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    const known = e.code ? FASTIFY_4XX[e.code] : undefined;
    if (known) return new ApiError(e.statusCode, known[0], known[1]);
    if (e.statusCode === 404) return new ApiError(404, 'not_found', 'no such route');
    return new ApiError(e.statusCode, 'bad_request', 'the request could not be read');
  }
  return new ApiError(500, 'internal_error', 'internal error');
}
