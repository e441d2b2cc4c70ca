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

/** Why a state conflict happened, in words a caller can act on. */
export interface ConflictDetails {
  /** A stable code: `not_awaiting_approval`, `approval_automatic`, `decision_in_progress`, ... */
  code: string;
  phase?: string;
}

export interface ProviderRefusal {
  endpoint: string;
  errorCode: string;
  description: string;
  httpStatus?: number;
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

/** The failure's type and first detail, whatever wraps it (ActivityFailure, WorkflowUpdateFailedError, ...). */
/** The provider's refusal an error carries; anything else is thrown again (it is not the provider's no). */
export function refusalOf(err: unknown): ProviderRefusal {
  const f = failureOf(err);
  if (f?.type !== FAILURE_TYPES.providerRefused) throw err;
  return f.details as ProviderRefusal;
}

export function failureOf(err: unknown): { type?: string; message: string; details?: unknown } | undefined {
  let e: unknown = err;
  for (let depth = 0; e && typeof e === 'object' && depth < 5; depth++) {
    if (e instanceof ApplicationFailure)
      return { type: e.type ?? undefined, message: e.message, details: e.details?.[0] };
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}
