/**
 * The errors workflows and their Updates raise on purpose, as `ApplicationFailure`s with a `type` and
 * structured details, so that callers map them by type (never by parsing a message). Safe for workflow
 * code (ApplicationFailure comes from @temporalio/common).
 */
import { ApplicationFailure } from '@temporalio/common';

export const FAILURE_TYPES = {
  /** A value the caller sent breaks a rule: details `{ field, rule }` (HTTP 400). */
  invalidArgument: 'InvalidArgument',
  /** The request is fine but the session (or subscription) is not where it can be carried out (409). */
  stateConflict: 'StateConflict',
  /** The reference is taken by another request (409 naming `reference`). */
  referenceConflict: 'ReferenceConflict',
  /** The provider refused the call for good: details are the provider's error (see ProviderRefusal). */
  providerRefused: 'ProviderRefused',
  /** No such session (404). */
  notFound: 'NotFound',
} as const;
export type FailureType = (typeof FAILURE_TYPES)[keyof typeof FAILURE_TYPES];

export interface FieldRule {
  field: string;
  rule: string;
}

/**
 * Every reason a request can be refused with 409 because of where a session (or subscription) is: a
 * closed list, each code written out (api/README.md lists them; the API's error envelope carries them).
 */
export const STATE_CONFLICT_CODES = [
  // sessions
  'approve_automatic',
  'finalize_automatic',
  'not_awaiting_approval',
  'not_awaiting_finalization',
  'not_cancelable',
  'decision_in_progress',
  'no_operation',
  'session_final',
  'not_refundable',
  'fully_refunded',
  'exceeds_refundable',
  'exceeds_held',
  'currency_mismatch',
  'start_not_open',
  'too_many_payouts',
  'payout_not_waiting',
  'not_accepted',
  'retry_window_passed',
  // subscriptions
  'not_pauseable',
  'not_resumeable',
  'not_changeable',
  'period_started',
  'too_many_pending_changes',
  'subscription_final',
  'nothing_owed',
  'period_not_owed',
  'period_being_charged',
  // a conflict whose cause was not said (an older worker's failure without details)
  'invalid_state',
] as const;
export type StateConflictCode = (typeof STATE_CONFLICT_CODES)[number];

/** Why a state conflict happened, in words a caller can act on. */
export interface ConflictDetails {
  code: StateConflictCode;
  phase?: string;
}

export interface ProviderRefusal {
  endpoint: string;
  errorCode: string;
  description: string;
  httpStatus?: number;
}

/**
 * The field and rule of a provider's `invalid_request` refusal: its description is `path.rule` (e.g.
 * `payment_form_config.session_id.not_unique`), a structured value, read here and nowhere else.
 */
export function refusedField(description: string): FieldRule {
  const dot = description.lastIndexOf('.');
  return dot < 0
    ? { field: '(body)', rule: description }
    : { field: description.slice(0, dot), rule: description.slice(dot + 1) };
}

export function invalidArgument(field: string, rule: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: FAILURE_TYPES.invalidArgument,
    message: `${field}: ${rule}`,
    nonRetryable: true,
    details: [{ field, rule } satisfies FieldRule],
  });
}

export function stateConflict(message: string, details: ConflictDetails): ApplicationFailure {
  return ApplicationFailure.create({
    type: FAILURE_TYPES.stateConflict,
    message,
    nonRetryable: true,
    details: [details],
  });
}

export function referenceConflict(message: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: FAILURE_TYPES.referenceConflict,
    message,
    nonRetryable: true,
    details: [{ field: 'reference', rule: message } satisfies FieldRule],
  });
}

export function providerRefused(r: ProviderRefusal): ApplicationFailure {
  return ApplicationFailure.create({
    type: FAILURE_TYPES.providerRefused,
    message: `${r.endpoint}: ${r.errorCode}: ${r.description}`,
    nonRetryable: true,
    details: [r],
  });
}

/** The provider's refusal an error carries; anything else is thrown again (it is not the provider's no). */
export function refusalOf(err: unknown): ProviderRefusal {
  const f = failureOf(err);
  if (f?.type !== FAILURE_TYPES.providerRefused) throw err;
  return f.details as ProviderRefusal;
}

/** The failure's type and first detail, whatever wraps it (ActivityFailure, WorkflowUpdateFailedError, ...). */
export function failureOf(err: unknown): { type?: string; message: string; details?: unknown } | undefined {
  let e: unknown = err;
  for (let depth = 0; e && typeof e === 'object' && depth < 5; depth++) {
    if (e instanceof ApplicationFailure)
      return { type: e.type ?? undefined, message: e.message, details: e.details?.[0] };
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}
