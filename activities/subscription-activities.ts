import { deriveIdempotencyKey, type ProviderClient } from '../provider';
import { scrubCardData, toFailure } from './failures';
import type { SubscriptionActivities } from './types';

/** The step name of one charge attempt: part of its idempotency key. */
export const chargeStep = (period: number, attempt: number): string => `period:${period}:attempt:${attempt}`;

export function createSubscriptionActivities(provider: ProviderClient): SubscriptionActivities {
  return {
    async initiateRecurringSession(subscriptionId, period, attempt, body) {
      try {
        const res = await provider.initiate(body, {
          idempotencyKey: deriveIdempotencyKey(subscriptionId, chargeStep(period, attempt)),
        });
        return scrubCardData(res.session_info);
      } catch (err) {
        throw toFailure(err);
      }
    },
  };
}
