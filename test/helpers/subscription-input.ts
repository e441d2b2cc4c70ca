/**
 * A subscription workflow's input as the client builds it (client/subscriptions.ts), for workflow tests
 * that start the workflow themselves: the default dunning and billing policies, with what a test changes.
 */
import { BILLING_DEFAULTS, declineCodes } from '../../common/billing-policy';
import { DEFAULT_SETTINGS, mergeSettings, type SettingsOverrides } from '../../common/settings';
import type { SubscriptionInput } from '../../common/subscription-input';
import type { BillingPolicy, DunningPolicy } from '../../common/views';

export interface TestSubscription extends Partial<
  Omit<SubscriptionInput, 'dunning' | 'policy' | 'settings'>
> {
  reference: string;
  schedule: SubscriptionInput['schedule'];
  dunning?: Partial<Omit<DunningPolicy, 'declineCodes'>> & {
    declineCodes?: Parameters<typeof declineCodes>[0];
  };
  policy?: Partial<BillingPolicy>;
  settings?: SettingsOverrides;
}

export function subscriptionInput(t: TestSubscription): SubscriptionInput {
  const { dunning = {}, policy = {}, settings, ...rest } = t;
  return {
    subscriptionId: `sub-${t.reference}`,
    token: 'rt_test',
    amount: { amount: 100, currency: 'rub' },
    customer: { user_id: 'u-billing' },
    testMode: true,
    ...rest,
    dunning: {
      retryDelaysMs: dunning.retryDelaysMs ?? [...BILLING_DEFAULTS.retryDelaysMs],
      onExhausted: dunning.onExhausted ?? BILLING_DEFAULTS.onExhausted,
      declineCodes: declineCodes(dunning.declineCodes),
      otherDeclines: dunning.otherDeclines ?? BILLING_DEFAULTS.otherDeclines,
      unavailableRetryMs: dunning.unavailableRetryMs ?? BILLING_DEFAULTS.unavailableRetryMs,
    },
    policy: {
      owed: policy.owed ?? BILLING_DEFAULTS.owed,
      catchUp: policy.catchUp ?? BILLING_DEFAULTS.catchUp,
      proration: policy.proration ?? BILLING_DEFAULTS.proration,
      spacingMs: policy.spacingMs ?? BILLING_DEFAULTS.spacingMs,
    },
    settings: mergeSettings(DEFAULT_SETTINGS, settings ?? {}),
  };
}
