/**
 * The API's one error shape, and how every error class of paysaga maps onto it. Messages never carry
 * request bodies: zod messages name rules, not values, and provider descriptions are PAN-redacted.
 */
import { ServiceError, WorkflowUpdateRPCTimeoutOrCancelledError } from '@temporalio/client';
import { InputValidationError, SessionNotFoundError, SessionStateError } from '../client/errors';
import { EventEndpointNotFoundError, EventNotFoundError, EventStateError } from '../client/event-errors';
import {
  ProviderError,
  ProviderOutcomeUnknownError,
  ProviderResponseError,
  ProviderUnavailableError,
  ProviderValidationError,
} from '../provider/errors';

export interface FieldIssue {
  field: string;
  rule: string;
}

export interface ErrorEnvelope {
  error: { code: string; message: string; fields?: FieldIssue[]; retryable: boolean };
}

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

/** `path.rule` strings of the provider client (e.g. `card_tokenize.not_null`) as {field, rule}. */
function splitProviderField(s: string): FieldIssue {
  const dot = s.lastIndexOf('.');
  return dot < 0 ? { field: '(body)', rule: s } : { field: s.slice(0, dot), rule: s.slice(dot + 1) };
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
  if (err instanceof SessionStateError) return new ApiError(409, 'invalid_state', err.message);
  if (err instanceof EventNotFoundError) return new ApiError(404, 'event_not_found', err.message);
  if (err instanceof EventEndpointNotFoundError) return new ApiError(404, 'endpoint_not_found', err.message);
  if (err instanceof EventStateError) return new ApiError(409, 'invalid_state', err.message);
  if (err instanceof ProviderOutcomeUnknownError)
    return new ApiError(504, 'outcome_unknown', 'outcome unknown, retry with the same Idempotency-Key', true);
  if (err instanceof ProviderUnavailableError)
    return new ApiError(503, 'provider_unavailable', 'the payment provider cannot be reached', true);
  if (err instanceof ProviderError) return new ApiError(502, err.errorCode, err.message, err.retryable);
  if (err instanceof ProviderResponseError)
    return new ApiError(502, 'provider_bad_response', 'the payment provider answered unexpectedly');
  if (err instanceof WorkflowUpdateRPCTimeoutOrCancelledError)
    return new ApiError(504, 'timeout', 'the session did not answer in time; retry', true);
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
