/** Which workflow runs a session of each kind (the intake starts it; a later run reopens it). */
import type { SessionKind } from '../common/kinds';
import { checkoutWorkflow } from './checkout';
import { fpsBindingWorkflow } from './fps-binding';
import { fpsPaymentWorkflow } from './fps-payment';
import { identityCheckWorkflow } from './identity-check';
import { payoutWorkflow } from './payout';

export const SESSION_WORKFLOWS = {
  card_checkout: checkoutWorkflow,
  payment_form: checkoutWorkflow,
  recurring_payment: checkoutWorkflow,
  fps_payment: fpsPaymentWorkflow,
  fps_binding: fpsBindingWorkflow,
  payout: payoutWorkflow,
  identity_check: identityCheckWorkflow,
} as const satisfies Record<SessionKind, typeof checkoutWorkflow>;
