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
  /**
   * paysaga's signed back_url of a session (docs/decisions/014-two-listeners.md); undefined when none is
   * configured.
   */
  returnUrl?: (sessionId: string) => string | undefined;
}

/** The sub-merchant and project a call carries, as the provider client's call options. */
const routed = (a: { submerchantId?: string; projectId?: string }) => ({
  ...(a.submerchantId ? { submerchantId: a.submerchantId } : {}),
  ...(a.projectId ? { projectId: a.projectId } : {}),
});

export function createIntakeActivities({ provider, returnUrl }: IntakeDeps): IntakeActivities {
  /** The session an opening call answered (card data scrubbed), or its failure in Temporal's terms. */
  const opening = async (send: () => Promise<{ session_info: SessionInfo }>): Promise<Opened> => {
    let session: SessionInfo;
    try {
      session = scrubCardData((await send()).session_info);
    } catch (err) {
      throw toFailure(err);
    }
    const url = returnUrl?.(session.id);
    return { session, ...(url ? { returnUrl: url } : {}) };
  };
  // The calls that move money or open a session carry a key derived from the reference and the request.
  return {
    initiate: (a) =>
      opening(() =>
        provider.initiate(a.body, { idempotencyKey: initiateKey(a.reference, a.fingerprint), ...routed(a) }),
      ),
    initCheckout: (a) =>
      opening(() =>
        provider.initCheckout(a.body, {
          idempotencyKey: initCheckoutKey(a.reference, a.fingerprint),
          ...routed(a),
        }),
      ),
    initTransfer: (a) =>
      opening(() =>
        provider.initTransfer(a.body, {
          idempotencyKey: initTransferKey(a.reference, a.fingerprint),
          ...routed(a),
        }),
      ),
    requestIdentityCheck: (a) => opening(() => provider.identityCheck(a.body, routed(a))),
  };
}
