/**
 * The business process of one payment or payout at the provider, once it is started:
 * the partner's approval, the payer's action, the finalization of a hold, and the result.
 */
import * as wf from '@temporalio/workflow';
import type { SessionInfo } from '../provider/schemas';
import { AmountMinor } from '../common/search-attributes';
import { failureReason, latestPayment, operationOf } from './snapshot';
import { provider, type SessionRun } from './session-run';

/** FPS: an expired QR is replaced by a new payment on the session, up to `max` times. */
export interface QrRenewal {
  max: number;
  used: number;
  /** The start/checkout body of the new payment. */
  body: Record<string, unknown>;
}

export interface ProcessOptions {
  renewal?: QrRenewal;
}

/** The latest payment's QR expired and another payment may still be started for it. */
export function renewableQr(s: SessionInfo | undefined, renewal: QrRenewal | undefined): boolean {
  const payment = latestPayment(s);
  return (
    !!renewal &&
    renewal.used < renewal.max &&
    payment?.transaction_status === 'unsuccessful' &&
    payment.error?.error_code === 'qr_expired'
  );
}

export async function runOperation(run: SessionRun, options: ProcessOptions = {}): Promise<void> {
  const { deadlines } = run.opts.settings;
  const sessionDeadline = Date.now() + deadlines.sessionMs;
  let payerDeadline: number | undefined;
  /** The payer's time ran out while the provider still had the operation open. */
  let payerLate = false;

  for (;;) {
    if (!run.isFinal() && !payerLate && renewableQr(run.snapshot, options.renewal)) {
      await renewPayment(run, options.renewal!);
      // The payer gets the full time again for the new QR.
      payerDeadline = undefined;
      continue;
    }
    if (run.isFinal()) return;
    const mismatch = run.amountProblem();
    if (mismatch) {
      await stopOnMismatch(run, mismatch);
      return;
    }
    switch (run.phase) {
      case 'awaiting_approval':
        await decideApproval(run, sessionDeadline);
        break;
      case 'awaiting_finalization':
        await decideFinalization(run, sessionDeadline);
        break;
      case 'awaiting_payer':
        payerDeadline ??= Date.now() + deadlines.payerActionMs;
        if (!(await run.waitForProgress(Math.min(payerDeadline, sessionDeadline)))) {
          await run.poll();
          if (run.phase !== 'awaiting_payer') break;
          if (Date.now() >= sessionDeadline) {
            run.end('canceled', 'payer_action_deadline: the payer did not complete the action in time');
            break;
          }
          // The provider cannot cancel an operation the payer is acting on (spec rule 3), so the payer
          // may still pay: follow the provider to its own end (3-DS or QR expiry) rather than report a
          // cancel that may not be true.
          payerLate = true;
          payerDeadline = sessionDeadline;
          run.log(
            'timer',
            'payer_action_deadline',
            'the payer did not act in time; following the provider to the end',
          );
        }
        break;
      default:
        if (!(await run.waitForProgress(sessionDeadline))) {
          run.end('failed', `session_deadline: no result from the provider within ${deadlines.sessionMs} ms`);
        }
    }
  }
}

/** A session that ended other than successfully says why: the provider's error code, unless the saga set a reason. */
export function explainEnd(run: SessionRun): void {
  if (run.phase === 'succeeded' || run.reason) return;
  const code = failureReason(run.snapshot);
  if (code) run.reason = code;
}

/** start/checkout again on the session: the provider appends a new payment with a new QR. */
async function renewPayment(run: SessionRun, renewal: QrRenewal): Promise<void> {
  const n = ++renewal.used;
  run.log('call', 'renew_payment', `qr_expired: new payment #${n} of ${renewal.max}`);
  const snapshot = await provider.startOperation(run.opts.sessionId, 'checkout', renewal.body, `start:${n}`);
  run.apply(snapshot, 'call', 'start/checkout');
}

function stepFor(run: SessionRun, decision: string): string {
  return `${decision}:${operationOf(run.snapshot)?.id ?? 'session'}`;
}

async function send(
  run: SessionRun,
  decision: 'approve' | 'cancel' | 'finalize',
  amount?: number,
): Promise<void> {
  const step = stepFor(run, decision);
  if (run.done.has(step)) return;
  const money =
    amount !== undefined && run.opts.money ? { amount, currency: run.opts.money.currency } : undefined;
  if (amount !== undefined) run.askedAmounts.push(amount);
  const snapshot = await provider.decide(run.opts.sessionId, decision, step, money);
  run.done.add(step);
  run.log('call', decision, money ? `${money.amount} ${money.currency}` : undefined);
  // A partial finalize changes what the session is worth: keep the search attribute current.
  if (decision === 'finalize' && amount !== undefined)
    wf.upsertSearchAttributes([{ key: AmountMinor, value: amount }]);
  run.apply(snapshot, 'call', `transaction/${decision}`);
}

/** Waits for the partner's manual decision or the deadline; the default on a deadline is cancel. */
async function manualDecision(run: SessionRun, deadlineMs: number, sessionDeadline: number): Promise<void> {
  const deadline = Math.min(Date.now() + deadlineMs, sessionDeadline);
  const phase = run.phase;
  const decided = await wf.condition(
    () => run.pendingDecision !== undefined || run.phase !== phase,
    Math.max(deadline - Date.now(), 1),
  );
  if (run.phase !== phase) return;
  const d = run.pendingDecision;
  if (!decided || !d) {
    await send(run, 'cancel');
    run.end(
      'canceled',
      `decision_deadline: no ${phase === 'awaiting_approval' ? 'approve' : 'finalize'} decision in time`,
    );
    return;
  }
  try {
    if (d.kind === 'cancel') {
      await send(run, 'cancel');
      run.end('canceled', d.reason ? `canceled_by_partner: ${d.reason}` : 'canceled_by_partner');
    } else {
      await send(run, d.kind, d.kind === 'finalize' ? d.amount : undefined);
    }
  } finally {
    run.pendingDecision = undefined;
  }
}

async function decideApproval(run: SessionRun, sessionDeadline: number): Promise<void> {
  const policy = run.opts.settings.approval;
  if (run.done.has(stepFor(run, 'approve'))) {
    await waitOrFail(run, sessionDeadline);
    return;
  }
  if (policy.mode === 'auto') await send(run, 'approve');
  else await manualDecision(run, policy.deadlineMs, sessionDeadline);
}

async function decideFinalization(run: SessionRun, sessionDeadline: number): Promise<void> {
  const policy = run.opts.settings.finalization;
  if (run.done.has(stepFor(run, 'finalize'))) {
    await waitOrFail(run, sessionDeadline);
    return;
  }
  if (policy.mode === 'auto') await send(run, 'finalize');
  else if (policy.mode === 'auto_partial') await send(run, 'finalize', policy.amount);
  else await manualDecision(run, policy.deadlineMs, sessionDeadline);
}

async function waitOrFail(run: SessionRun, sessionDeadline: number): Promise<void> {
  if (!(await run.waitForProgress(sessionDeadline)))
    run.end('failed', 'session_deadline: the provider did not act on the decision');
}

/** The amount or currency is not what was sent: cancel what can be canceled, and stop. */
async function stopOnMismatch(run: SessionRun, mismatch: string): Promise<void> {
  if (run.phase === 'awaiting_approval' || run.phase === 'awaiting_finalization') await send(run, 'cancel');
  run.end('failed', `amount_mismatch: ${mismatch}`);
}
