import { opaqueToken, randomDigits } from '../ids';
import { timestamp } from '../clock';
import { ApiError, invalid } from '../errors';
import type { Echo, Money, PaymentRecord, SessionRecord } from '../model';
import type { FlowContext } from './context';
import type { Job, PaymentStep } from './job';
import { qrImage } from './qr-image';

/*
 * Payment flows (STATES.md): preparing -> approve_pending -> processing -> [3-D Secure | FPS QR] ->
 * hold -> [finalization_pending] -> capture -> checkout_results. Each step runs after a scaled pause and
 * first checks that the payment is still in the stage the step was scheduled for.
 */

const THREE_DS_SUCCESS_CODE = '12345';

export interface NewPayment {
  instrument: PaymentRecord['instrument'];
  sum: Money;
  echo: Echo;
  viaWidget?: boolean;
}

/** Creates the payment of a session (its only operation) and sets the flow going. */
export function startPayment(ctx: FlowContext, session: SessionRecord, input: NewPayment): PaymentRecord {
  const payment: PaymentRecord = {
    kind: 'payment',
    id: ctx.state.ids.take('pm'),
    sessionId: session.id,
    status: 'pending',
    stage: 'preparing',
    createdAt: timestamp(),
    instrument: input.instrument,
    // A binding charges nothing: the amount the partner had to send is not shown as a sum.
    sum:
      input.instrument.kind === 'fps_binding'
        ? { sum: 0, currency_code: input.sum.currency_code }
        : input.sum,
    echo: input.echo,
    held: 0,
    captured: 0,
    moneyback: [],
    ...(input.viaWidget ? { viaWidget: true } : {}),
  };
  session.payments.push(payment);
  ctx.state.operations.set(payment.id, session.id);
  ctx.touch(session);
  ctx.later({ kind: 'payment', step: 'prepare', operationId: payment.id });
  return payment;
}

function tokenOf(ctx: FlowContext, p: PaymentRecord) {
  return p.instrument.kind === 'recurring' ? ctx.state.tokens.recurring.get(p.instrument.token) : undefined;
}

function prepare(ctx: FlowContext, p: PaymentRecord): void {
  if (p.stage !== 'preparing') return;
  const token = tokenOf(ctx, p);
  if (token && !token.active) {
    ctx.fail(p, 'recurring_token_inactive', 'recurring token is disabled');
    return;
  }
  const session = ctx.sessionOf(p);
  if (ctx.project(session.projectId).autoApprove) {
    beginPaymentProcessing(ctx, p);
    return;
  }
  ctx.setStage(p, 'awaiting_approval');
  ctx.emit(session, 'approve_pending');
}

/** After approval (by the partner or automatically). */
export function beginPaymentProcessing(ctx: FlowContext, p: PaymentRecord): void {
  ctx.setStage(p, 'processing');
  ctx.later({ kind: 'payment', step: 'process', operationId: p.id });
}

/** A scheduled step of a payment's flow (jobs.ts). */
export function paymentStep(
  ctx: FlowContext,
  p: PaymentRecord,
  job: { step: PaymentStep } | { step: 'capture'; amount: number },
): void {
  switch (job.step) {
    case 'prepare':
      return prepare(ctx, p);
    case 'process':
      return process(ctx, p);
    case 'authorize':
      if (p.stage === 'processing') authorizeCard(ctx, p);
      return;
    case 'capture':
      return capture(ctx, p, job.amount);
    case 'settle_fps':
      return settleFps(ctx, p);
  }
}

/** The payer's time for 3-D Secure or the QR ran out (jobs.ts). */
export function expirePaymentAction(ctx: FlowContext, p: PaymentRecord, action: '3ds' | 'qr'): void {
  if (action === '3ds' && p.stage === 'awaiting_3ds')
    ctx.fail(p, 'three_ds_timeout', '3-D Secure was not completed in time');
  if (action === 'qr' && p.stage === 'awaiting_payer_qr')
    ctx.fail(p, 'qr_expired', 'QR code expired; start the payment again');
}

function expiry(p: PaymentRecord, action: '3ds' | 'qr'): Job {
  return { kind: 'payment_expiry', action, operationId: p.id };
}

function process(ctx: FlowContext, p: PaymentRecord): void {
  if (p.stage !== 'processing') return;
  const i = p.instrument;
  switch (i.kind) {
    case 'card':
      if (ctx.state.vault.get(i.cardId)?.threeDs) openChallenge(ctx, p);
      else authorizeCard(ctx, p);
      return;
    case 'recurring': {
      const source = tokenOf(ctx, p)?.source;
      if (source?.kind === 'fps_account') chargeFpsAccount(ctx, p);
      else if (i.initiatedBy === 'client') openChallenge(ctx, p);
      else authorizeCard(ctx, p);
      return;
    }
    case 'fps':
      // The FPS "hold stage" is before the QR is shown: a thief never gets one.
      if (ctx.scenario(p) === 'thief')
        ctx.fail(p, 'fraud_suspected', 'test behaviour thief: canceled at the hold stage');
      else showQr(ctx, p);
      return;
    case 'fps_binding':
      showQr(ctx, p);
      return;
    case 'fps_account':
      throw new Error('fps_account is a payout instrument');
  }
}

function openChallenge(ctx: FlowContext, p: PaymentRecord): void {
  const id = opaqueToken('acs');
  const base = new URL(ctx.publicUrl());
  ctx.state.challenges.set(id, p.id);
  p.challengeId = id;
  const paReq = Buffer.from(
    JSON.stringify({ payment_id: p.id, amount: p.sum.sum, currency: p.sum.currency_code }),
  ).toString('base64');
  p.userAction = {
    type: 'destination_info',
    destination_info: {
      url_address: `${base.origin}/sandbox/3ds/${id}`,
      domain: base.host,
      http_method: 'POST',
      additional_params: {},
      extra_params: { PaReq: paReq, MD: id },
    },
  };
  ctx.setStage(p, 'awaiting_3ds');
  ctx.emit(ctx.sessionOf(p), 'action_pending');
  p.expiryJob = ctx.schedule(ctx.config.threeDsTtlSeconds * 1000, expiry(p, '3ds'));
}

export interface ChallengeOutcome {
  session: SessionRecord;
  payment: PaymentRecord;
  passed: boolean;
}

/** The payer submitted the 3-D Secure page. */
export function completeChallenge(ctx: FlowContext, challengeId: string, code: string): ChallengeOutcome {
  const paymentId = ctx.state.challenges.get(challengeId);
  const found = paymentId === undefined ? undefined : ctx.state.payment(paymentId);
  if (!found || found.payment.stage !== 'awaiting_3ds')
    throw new ApiError('repository_record_not_found', 'challenge');
  const { session, payment } = found;
  ctx.scheduler.cancel(payment.expiryJob);
  payment.expiryJob = undefined;
  ctx.state.challenges.delete(challengeId);
  payment.challengeId = undefined;
  payment.userAction = undefined;
  const passed = code.trim() === THREE_DS_SUCCESS_CODE;
  if (passed) {
    ctx.setStage(payment, 'processing');
    ctx.later({ kind: 'payment', step: 'authorize', operationId: payment.id });
  } else {
    ctx.fail(payment, 'three_ds_failed', '3-D Secure authentication failed');
  }
  return { session, payment, passed };
}

function cardOf(ctx: FlowContext, p: PaymentRecord) {
  const i = p.instrument;
  if (i.kind === 'card') return ctx.state.vault.get(i.cardId);
  const source = tokenOf(ctx, p)?.source;
  return source?.kind === 'card' ? ctx.state.vault.get(source.cardId) : undefined;
}

/** Authorization: funds are frozen (hold), unless the issuer or the thief scenario stops it first. */
function authorizeCard(ctx: FlowContext, p: PaymentRecord): void {
  if (cardOf(ctx, p)?.declines) {
    ctx.fail(p, 'card_declined', 'declined by the issuer');
    return;
  }
  if (ctx.scenario(p) === 'thief') {
    ctx.fail(p, 'fraud_suspected', 'test behaviour thief: canceled at the hold stage');
    return;
  }
  ctx.move(p, 'hold', p.sum.sum);
  p.held = p.sum.sum;
  p.transactionInfo = { retrieval_ref_number: randomDigits(12), authorization_code: randomDigits(6) };
  const session = ctx.sessionOf(p);
  if (ctx.project(session.projectId).hold) {
    ctx.setStage(p, 'awaiting_finalization');
    ctx.emit(session, 'finalization_pending');
    return;
  }
  ctx.setStage(p, 'capturing');
  ctx.later({ kind: 'payment', step: 'capture', operationId: p.id, amount: p.held });
}

/** Partner's finalize (hold projects) or the automatic capture: charges `amount` of the held funds. */
export function scheduleCapture(ctx: FlowContext, p: PaymentRecord, amount: number): void {
  p.finalized = amount;
  ctx.setStage(p, 'capturing');
  ctx.later({ kind: 'payment', step: 'capture', operationId: p.id, amount });
}

function capture(ctx: FlowContext, p: PaymentRecord, amount: number): void {
  if (p.stage !== 'capturing') return;
  if (ctx.scenario(p) === 'loser') {
    ctx.fail(p, 'insufficient_funds', 'test behaviour loser: canceled at the charge of held funds');
    return;
  }
  ctx.move(p, 'capture', amount);
  ctx.move(p, 'release', p.held - amount);
  p.captured = amount;
  p.held = 0;
  complete(ctx, p);
}

/** A recurring payment by an FPS-account token: a one-step debit, no payer action. */
function chargeFpsAccount(ctx: FlowContext, p: PaymentRecord): void {
  const scenario = ctx.scenario(p);
  if (scenario === 'thief')
    return ctx.fail(p, 'fraud_suspected', 'test behaviour thief: canceled at the hold stage');
  if (scenario === 'loser')
    return ctx.fail(p, 'insufficient_funds', 'test behaviour loser: canceled at the charge');
  ctx.move(p, 'charge', p.sum.sum);
  p.captured = p.sum.sum;
  p.transactionInfo = { fps_transaction_id: `A${randomDigits(20)}` };
  complete(ctx, p);
}

function showQr(ctx: FlowContext, p: PaymentRecord): void {
  const content = `${new URL(ctx.publicUrl()).origin}/sandbox/fps/${p.id}`;
  p.userAction = {
    type: 'payment_qr',
    payment_qr: { qr_data: { qr_content: content, qr_image: qrImage(content) } },
  };
  ctx.setStage(p, 'awaiting_payer_qr');
  ctx.emit(ctx.sessionOf(p), 'action_pending');
  p.expiryJob = ctx.schedule(ctx.config.qrTtlSeconds * 1000, expiry(p, 'qr'));
}

/** The payer paid the QR (or confirmed the binding) in the bank app. */
export function payQr(
  ctx: FlowContext,
  paymentId: string,
  payerPhone?: string,
): { session: SessionRecord; payment: PaymentRecord } {
  const found = ctx.state.payment(paymentId);
  if (!found) throw new ApiError('repository_record_not_found', 'payment_id');
  const { session, payment } = found;
  if (payment.error?.error_code === 'qr_expired')
    throw new ApiError('qr_expired', 'QR code expired; start the payment again');
  if (payment.stage !== 'awaiting_payer_qr') throw invalid('payment_id', 'not_awaiting_payment');
  ctx.scheduler.cancel(payment.expiryJob);
  payment.expiryJob = undefined;
  payment.userAction = undefined;
  if (payerPhone) payment.payerPhone = payerPhone;
  ctx.setStage(payment, 'capturing');
  ctx.later({ kind: 'payment', step: 'settle_fps', operationId: payment.id });
  return { session, payment };
}

function settleFps(ctx: FlowContext, p: PaymentRecord): void {
  if (p.stage !== 'capturing') return;
  const fpsId = `A${randomDigits(20)}`;
  p.transactionInfo = { fps_transaction_id: fpsId };
  const session = ctx.sessionOf(p);
  session.transactionInfo = { fps_transaction_id: fpsId };
  if (p.instrument.kind === 'fps') {
    if (ctx.scenario(p) === 'loser') {
      ctx.fail(p, 'insufficient_funds', 'test behaviour loser: canceled at the charge');
      return;
    }
    ctx.move(p, 'charge', p.sum.sum);
    p.captured = p.sum.sum;
  }
  complete(ctx, p);
}

/** Success; a recurring token when the partner asked for one (rule 9) or for a binding (rule 7). */
function complete(ctx: FlowContext, p: PaymentRecord): void {
  const wantsToken = p.instrument.kind === 'fps_binding' || p.echo.payment_settings?.allow_recurring === true;
  if (wantsToken && p.instrument.kind !== 'recurring') {
    const source =
      p.instrument.kind === 'card'
        ? ({ kind: 'card', cardId: p.instrument.cardId } as const)
        : ({ kind: 'fps_account', accountId: p.payerPhone ?? opaqueToken('fpsacc') } as const);
    const now = Date.now();
    const token = opaqueToken('rt');
    ctx.state.tokens.addRecurring({
      token,
      projectId: ctx.sessionOf(p).projectId,
      source,
      active: true,
      createdAtMs: now,
      expiresAtMs: now + 3 * 365 * 24 * 3600 * 1000,
    });
    p.recurringToken = token;
  }
  ctx.succeed(p);
}
