import { ApplicationFailure } from '@temporalio/common';
import { PaysagaProviderError, ProviderError, ProviderOutcomeUnknownError, redactPans } from '../provider';

/**
 * A provider error as a Temporal failure: the type names the class (and the provider's code),
 * `nonRetryable` follows the error's own retry class. Messages carry no card data.
 */
export function toFailure(err: unknown): ApplicationFailure {
  if (err instanceof ProviderError) {
    return ApplicationFailure.create({
      message: redactPans(err.message),
      type: `ProviderError:${err.errorCode}`,
      nonRetryable: !err.retryable,
      details: [
        {
          errorCode: err.errorCode,
          description: redactPans(err.description),
          endpoint: err.endpoint,
          httpStatus: err.httpStatus ?? null,
        },
      ],
    });
  }
  if (err instanceof ProviderOutcomeUnknownError) {
    // Retrying is the right move once the state showed nothing happened: the same key makes it safe.
    return ApplicationFailure.retryable(redactPans(err.message), err.name);
  }
  if (err instanceof PaysagaProviderError) {
    return ApplicationFailure.create({
      message: redactPans(err.message),
      type: err.name,
      nonRetryable: !err.retryable,
    });
  }
  const message = err instanceof Error ? err.message : String(err);
  return ApplicationFailure.retryable(redactPans(message), 'UnexpectedError');
}

const CARD_KEYS = new Set([
  'card_details',
  'hashed_card_details',
  'card_number',
  'card_code',
  'hashed_card_number',
  'hashed_card_code',
]);

/** Defense in depth: whatever the provider echoes, no card field leaves an activity. */
export function scrubCardData<T>(value: T): T {
  if (Array.isArray(value)) return value.map(scrubCardData) as T;
  if (!value || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (!CARD_KEYS.has(k)) out[k] = scrubCardData(v);
  return out as T;
}
