import { ApplicationFailure } from '@temporalio/common';
import { providerRefused, type ProviderRefusal } from '../common/failures';
import {
  PaysagaProviderError,
  ProviderError,
  ProviderOutcomeUnknownError,
  ProviderValidationError,
  redactPans,
} from '../provider';

/** Failure types of provider calls that retrying may fix (the workflow keeps trying them). */
export const RETRYABLE_PROVIDER_FAILURES = {
  unavailable: 'ProviderUnavailable',
  outcomeUnknown: 'ProviderOutcomeUnknown',
  unexpected: 'UnexpectedError',
} as const;

/**
 * A provider error as a Temporal failure. A refusal the provider will repeat is `ProviderRefused`
 * (non-retryable, details: the provider's error); everything else is retryable by Temporal's policy,
 * money-moving calls then look at the state before they send again. Messages carry no card data.
 */
export function toFailure(err: unknown): ApplicationFailure {
  if (err instanceof ProviderError) {
    const refusal: ProviderRefusal = {
      endpoint: err.endpoint,
      errorCode: err.errorCode,
      description: redactPans(err.description),
      ...(err.httpStatus ? { httpStatus: err.httpStatus } : {}),
    };
    if (!err.retryable) return providerRefused(refusal);
    return ApplicationFailure.create({
      type: RETRYABLE_PROVIDER_FAILURES.unavailable,
      message: redactPans(err.message),
      details: [refusal],
    });
  }
  if (err instanceof ProviderValidationError) {
    return providerRefused({
      endpoint: err.endpoint,
      errorCode: 'invalid_request',
      description: err.fields.join(', '),
    });
  }
  if (err instanceof ProviderOutcomeUnknownError) {
    // Retrying is right: the retry reads the state first, and the same key makes a resend safe.
    return ApplicationFailure.retryable(redactPans(err.message), RETRYABLE_PROVIDER_FAILURES.outcomeUnknown);
  }
  if (err instanceof PaysagaProviderError) {
    // Not reached, or an answer that could not be read: nothing proves the call did or did not act.
    return ApplicationFailure.retryable(redactPans(err.message), RETRYABLE_PROVIDER_FAILURES.unavailable);
  }
  const message = err instanceof Error ? err.message : String(err);
  return ApplicationFailure.retryable(redactPans(message), RETRYABLE_PROVIDER_FAILURES.unexpected);
}
