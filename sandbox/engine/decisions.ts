import { timestamp } from '../clock';
import { invalid } from '../errors';
import type { Money, OperationRecord, SessionRecord } from '../model';
import { beginPaymentProcessing, scheduleCapture } from './checkout';
import type { FlowContext } from './context';
import { beginPayoutProcessing } from './transfer';

/*
 * The partner's decisions (rule 3): approve and cancel only while approve_pending stands,
 * finalize and cancel only while finalization_pending stands. Anything else is invalid_request naming why.
 */

function awaiting(session: SessionRecord, stage: OperationRecord['stage']): OperationRecord | undefined {
  return [...session.payments, ...session.payouts].find((o) => o.stage === stage);
}

export function approve(ctx: FlowContext, session: SessionRecord): void {
  const op = awaiting(session, 'awaiting_approval');
  if (!op) throw invalid('session_id', 'not_awaiting_approval');
  session.actions.approve = timestamp();
  if (op.kind === 'payment') beginPaymentProcessing(ctx, op);
  else beginPayoutProcessing(ctx, op);
}

export function cancel(ctx: FlowContext, session: SessionRecord): void {
  const op = awaiting(session, 'awaiting_approval') ?? awaiting(session, 'awaiting_finalization');
  if (!op) throw invalid('session_id', 'not_cancellable');
  session.actions.cancel = timestamp();
  ctx.fail(op, 'canceled_by_partner', 'canceled by the partner');
}

export function finalize(ctx: FlowContext, session: SessionRecord, sum: Money | undefined): void {
  const op = awaiting(session, 'awaiting_finalization');
  if (!op || op.kind !== 'payment') throw invalid('session_id', 'not_awaiting_finalization');
  if (sum && sum.currency_code !== op.sum.currency_code)
    throw invalid('sum_info.currency_code', 'invalid_value');
  const amount = sum?.sum ?? op.held;
  if (amount > op.held) throw invalid('sum_info.sum', 'exceeds_held_amount');
  session.actions.finalize = timestamp();
  // The overcapture fault: the whole hold is charged whatever was asked (a bug the partner must notice).
  scheduleCapture(ctx, op, ctx.faults?.overcapture() ? op.held : amount);
}
