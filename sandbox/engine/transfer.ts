import { timestamp } from '../clock';
import { randomDigits } from '../ids';
import type { Echo, Money, PayoutRecord, SessionRecord } from '../model';
import type { FlowContext } from './context';
import { isRegisteredFpsPhone } from './instruments';
import type { PayoutStep } from './job';

/*
 * Payout flows (STATES.md): preparing -> approve_pending -> processing -> payout -> checkout_results.
 * The identity check is a payout of nothing that skips approval (rule 5).
 */

export interface NewPayout {
  instrument: PayoutRecord['instrument'];
  sum: Money;
  echo: Echo;
  identityCheck?: boolean;
}

export function startPayout(ctx: FlowContext, session: SessionRecord, input: NewPayout): PayoutRecord {
  const payout: PayoutRecord = {
    kind: 'payout',
    id: ctx.state.ids.take('po'),
    sessionId: session.id,
    status: 'pending',
    stage: 'preparing',
    createdAt: timestamp(),
    instrument: input.instrument,
    sum: input.sum,
    echo: input.echo,
    identityCheck: input.identityCheck ?? false,
  };
  session.payouts.push(payout);
  ctx.state.operations.set(payout.id, session.id);
  if (payout.identityCheck) {
    ctx.setStage(payout, 'processing');
    ctx.later({ kind: 'payout', step: 'identity_check', operationId: payout.id });
  } else {
    ctx.touch(session);
    ctx.later({ kind: 'payout', step: 'prepare', operationId: payout.id });
  }
  return payout;
}

function inactiveToken(ctx: FlowContext, p: PayoutRecord): boolean {
  return (
    p.instrument.kind === 'recurring' && ctx.state.tokens.recurring.get(p.instrument.token)?.active !== true
  );
}

function prepare(ctx: FlowContext, p: PayoutRecord): void {
  if (p.stage !== 'preparing') return;
  if (inactiveToken(ctx, p)) {
    ctx.fail(p, 'recurring_token_inactive', 'recurring token is disabled');
    return;
  }
  const session = ctx.sessionOf(p);
  if (ctx.project(session.projectId).autoApprove) {
    beginPayoutProcessing(ctx, p);
    return;
  }
  ctx.setStage(p, 'awaiting_approval');
  ctx.emit(session, 'approve_pending');
}

export function beginPayoutProcessing(ctx: FlowContext, p: PayoutRecord): void {
  ctx.setStage(p, 'processing');
  ctx.later({ kind: 'payout', step: 'execute', operationId: p.id });
}

/** A scheduled step of a payout's flow (jobs.ts). */
export function payoutStep(ctx: FlowContext, p: PayoutRecord, step: PayoutStep): void {
  switch (step) {
    case 'prepare':
      return prepare(ctx, p);
    case 'execute':
      return execute(ctx, p);
    case 'identity_check':
      return checkIdentity(ctx, p);
  }
}

function execute(ctx: FlowContext, p: PayoutRecord): void {
  if (p.stage !== 'processing') return;
  if (ctx.scenario(p) === 'loser')
    return ctx.fail(p, 'payout_declined', 'test behaviour loser: the payout ends with an error');
  if (inactiveToken(ctx, p)) return ctx.fail(p, 'recurring_token_inactive', 'recurring token is disabled');
  const i = p.instrument;
  if (i.kind === 'fps_account' && !isRegisteredFpsPhone(i.phone, ctx.config.registeredFpsPhones)) {
    return ctx.fail(p, 'recipient_not_registered', 'the recipient is not registered in FPS');
  }
  if (i.kind === 'card' && ctx.state.vault.get(i.cardId)?.declines)
    return ctx.fail(p, 'card_declined', 'declined by the issuer');
  ctx.move(p, 'payout', p.sum.sum);
  p.transactionInfo =
    i.kind === 'fps_account'
      ? { fps_transaction_id: `B${randomDigits(20)}` }
      : { retrieval_ref_number: randomDigits(12), authorization_code: randomDigits(6) };
  ctx.succeed(p);
}

function checkIdentity(ctx: FlowContext, p: PayoutRecord): void {
  if (p.stage !== 'processing' || p.instrument.kind !== 'fps_account') return;
  if (isRegisteredFpsPhone(p.instrument.phone, ctx.config.registeredFpsPhones)) ctx.succeed(p);
  else ctx.fail(p, 'recipient_not_registered', 'the recipient is not registered in FPS');
}
