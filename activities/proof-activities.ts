/**
 * The worker's own check of a provider webhook (docs/decisions/016-results-are-proven.md): the API
 * verified it at the edge, and the session believes it only once its worker has verified the same bytes
 * again with the service keys it holds now, so a signal sent by anyone else (the Temporal UI, a
 * compromised service) cannot claim an outcome, and a withdrawn key stops counting everywhere at once.
 */
import { scrubCardData, type WebhookVerification } from '../provider';
import { isWellFormedText } from '../provider/schemas';
import type { ProofActivities } from './types';

export function createProofActivities(
  verify: (raw: Buffer, signature: string | undefined) => WebhookVerification,
): ProofActivities {
  return {
    async verifyProviderEvent({ body, signature }) {
      // The API signals the verified bytes as strict UTF-8 text, which encodes back to exactly them. A
      // string that is not text (a lone surrogate) did not come from there, and would encode otherwise.
      if (!isWellFormedText(body))
        return { ok: false, reason: 'ill_formed_text', detail: 'body: a lone UTF-16 surrogate, not text' };
      const v = verify(Buffer.from(body, 'utf8'), signature);
      if (!v.ok) return { ok: false, reason: v.reason, detail: v.detail };
      return { ok: true, event: scrubCardData(v.event) };
    },
  };
}
