import { expirePaymentAction, paymentStep } from './checkout';
import type { FlowContext } from './context';
import { completeRefund } from './moneyback';
import { payoutStep } from './transfer';
import type { Job } from './job';

/** Carries out a job the scheduler hands back when it is due. */
export function runJob(ctx: FlowContext, job: Job): void {
  const found = ctx.state.operation(job.operationId);
  if (!found) {
    ctx.log.warn({ job }, 'sandbox job for an unknown operation dropped');
    return;
  }
  const { op } = found;
  switch (job.kind) {
    case 'payment':
      if (op.kind === 'payment') paymentStep(ctx, op, job);
      return;
    case 'payment_expiry':
      if (op.kind === 'payment') expirePaymentAction(ctx, op, job.action);
      return;
    case 'payout':
      if (op.kind === 'payout') payoutStep(ctx, op, job.step);
      return;
    case 'refund':
      if (op.kind === 'payment') completeRefund(ctx, op, job.refundId);
      return;
  }
}
