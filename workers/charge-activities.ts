/**
 * Opening a subscription's charge: its reference claimed in the store, the provider session and its
 * payment opened once (transaction/init/checkout, keyed by the reference and the charge's fingerprint),
 * and the charge's session workflow started, exactly as the API opens a session for a partner's
 * reference (client/starter.ts, docs/decisions/011-paysaga-owns-its-references.md). A retry, a restart
 * or a later run of the subscription asks again and gets the same session: no charge opens twice. Here,
 * beside the worker, because it is the client's own path (activities/ may not load client/).
 */
import { getClient } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { ChargeActivities } from '../activities/types';
import { toFailure } from '../activities/failures';
import { providerRefused } from '../common/failures';
import { DEFAULT_SETTINGS } from '../common/settings';
import type { ProviderClient } from '../provider';
import type { Store } from '../store/database';
import type { ClientContext } from '../client/context';
import { ProviderRefusedError, ReferenceConflictError } from '../client/errors';
import { openSession } from '../client/starter';

export function createChargeActivities(o: {
  provider: ProviderClient;
  store: Store;
  taskQueue: string;
}): ChargeActivities {
  return {
    async openCharge(c) {
      const ctx: ClientContext = {
        temporal: getClient(),
        provider: o.provider,
        store: o.store,
        taskQueue: o.taskQueue,
        settings: c.settings ?? DEFAULT_SETTINGS,
        returnUrl: () => undefined,
        projectOf: () => (c.projectId ? { projectId: c.projectId } : {}),
      };
      try {
        const { sessionId } = await openSession(ctx, {
          kind: 'recurring_payment',
          reference: c.reference,
          money: c.money,
          ...(c.submerchantId ? { submerchantId: c.submerchantId } : {}),
          ...(c.projectId ? { projectId: c.projectId } : {}),
          ...(c.customerId ? { customerId: c.customerId } : {}),
          open: { by: 'init_checkout', body: c.body },
          start: { by: 'provider' },
          fingerprintOf: { subscription: c.subscriptionId, period: c.period, attempt: c.attempt },
          notify: c.subscriptionId,
        });
        return { sessionId };
      } catch (err) {
        // The provider refuses this charge for good: the subscription counts the attempt as declined.
        if (err instanceof ProviderRefusedError) throw providerRefused(err.refusal);
        // The reference names another request: a defect, never retried into a second charge.
        if (err instanceof ReferenceConflictError)
          throw ApplicationFailure.nonRetryable(err.message, 'ReferenceConflict');
        throw toFailure(err);
      }
    },
  };
}
