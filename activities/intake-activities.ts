/** Opening a provider session for a reference (workflows/reference.ts): the calls before any session exists. */
import {
  initCheckoutKey,
  initiateKey,
  initTransferKey,
  scrubCardData,
  type ProviderClient,
} from '../provider';
import { toFailure } from './failures';
import type { SessionInfo } from '../provider/schemas';
import type { IntakeActivities, Opened } from './types';

export interface IntakeDeps {
  provider: ProviderClient;
  /** paysaga's signed back_url of a session (DESIGN decision 14); undefined when none is configured. */
  returnUrl?: (sessionId: string) => string | undefined;
}

export function createIntakeActivities({ provider, returnUrl }: IntakeDeps): IntakeActivities {
  const opened = (session: SessionInfo): Opened => {
    const url = returnUrl?.(session.id);
    return { session: scrubCardData(session), ...(url ? { returnUrl: url } : {}) };
  };
  return {
    async initiate({ reference, fingerprint, body, submerchantId, projectId }) {
      try {
        const res = await provider.initiate(body, {
          idempotencyKey: initiateKey(reference, fingerprint),
          ...(submerchantId ? { submerchantId } : {}),
          ...(projectId ? { projectId } : {}),
        });
        return opened(res.session_info);
      } catch (err) {
        throw toFailure(err);
      }
    },
    async initCheckout({ reference, fingerprint, body, submerchantId, projectId }) {
      try {
        const res = await provider.initCheckout(body, {
          idempotencyKey: initCheckoutKey(reference, fingerprint),
          ...(submerchantId ? { submerchantId } : {}),
          ...(projectId ? { projectId } : {}),
        });
        return opened(res.session_info);
      } catch (err) {
        throw toFailure(err);
      }
    },
    async initTransfer({ reference, fingerprint, body, submerchantId, projectId }) {
      try {
        const res = await provider.initTransfer(body, {
          idempotencyKey: initTransferKey(reference, fingerprint),
          ...(submerchantId ? { submerchantId } : {}),
          ...(projectId ? { projectId } : {}),
        });
        return opened(res.session_info);
      } catch (err) {
        throw toFailure(err);
      }
    },
    async requestIdentityCheck({ body, submerchantId, projectId }) {
      try {
        const res = await provider.identityCheck(body, {
          ...(submerchantId ? { submerchantId } : {}),
          ...(projectId ? { projectId } : {}),
        });
        return opened(res.session_info);
      } catch (err) {
        throw toFailure(err);
      }
    },
  };
}
