/** Every workflow the worker runs (bundled from this file). */
export { checkoutWorkflow } from './checkout';
export { fpsPaymentWorkflow } from './fps-payment';
export { fpsBindingWorkflow } from './fps-binding';
export { payoutWorkflow } from './payout';
export { identityCheckWorkflow } from './identity-check';
export { subscriptionWorkflow } from './subscription';
export { reconcilerWorkflow } from './reconciler';
