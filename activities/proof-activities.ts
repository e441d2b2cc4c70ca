/**
 * The worker's own check of a provider webhook (DESIGN decision 16): the API verified it at the edge,
 * and the session believes it only once its worker has verified the same bytes again, so a signal sent
 * by anyone else (the Temporal UI, a compromised service) cannot claim an outcome. The key that
 * verified it comes back with the event: the session checks later events signed with the same key
 * itself (workflows/session/inbox.ts).
 */
import { scrubCardData, type WebhookVerification } from '../provider';
import type { ProofActivities } from './types';

export function createProofActivities(
  verify: (raw: Buffer, signature: string | undefined) => WebhookVerification,
): ProofActivities {
  return {
    async verifyProviderEvent({ body, signature }) {
      const v = verify(Buffer.from(body, 'utf8'), signature);
      if (!v.ok) return { ok: false, reason: `${v.reason}: ${v.detail}` };
      return { ok: true, event: scrubCardData(v.event), ...(v.key ? { key: v.key } : {}) };
    },
  };
}
