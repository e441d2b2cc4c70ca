/**
 * The partner's decisions (docs/decisions/005-decisions-belong-to-the-partner.md): approve or cancel after
 * approve_pending, finalize or cancel after finalization_pending. Automatic policies decide in the process
 * itself; manual ones through Updates, accepted only where they will be carried out (the policy is manual and
 * the provider waits for that decision now) and answered with the provider's result: a refusal is an error,
 * never a 200.
 */
import * as wf from '@temporalio/workflow';
import type { Decision, SessionPhase } from '../../common/kinds';
import {
  FAILURE_TYPES,
  failureOf,
  invalidArgument,
  stateConflict,
  type StateConflictCode,
} from '../../common/failures';
import { approveUpdate, cancelUpdate, finalizeUpdate } from '../../common/messages';
import {
  approveRequest,
  checkArgument,
  finalizeRequest,
  sessionCancelRequest,
} from '../../common/message-schemas';
import { reason, type EndReason } from '../../common/reasons';
import { stepName } from '../../common/steps';
import { provider } from '../calls';
import type { Session } from '../session';
import { operationOf, pastApproval } from '../../common/snapshot';

/** The amount a finalize charges (none: the whole hold); what the session is worth follows it. */
function noteFinalize(session: Session, amount: number | undefined): void {
  if (amount === undefined) {
    delete session.state.finalizeAmount;
    return;
  }
  session.state.finalizeAmount = amount;
  // A partial finalize changes what the session is worth: keep the search attribute current.
  session.journal.worth(amount);
}

/**
 * Sends a decision on the operation waiting for it and applies the provider's answer. A refusal is
 * thrown after one look at the state (the truth after a refusal).
 */
export async function carryOut(session: Session, decision: Decision, amount?: number): Promise<void> {
  const op = operationOf(session.state.snapshot);
  if (!op) throw stateConflict('no operation to decide on', { code: 'no_operation', phase: session.phase });
  const step = stepName({ kind: decision, operationId: op.id });
  const args = {
    ...session.runtime.callArgs(),
    operationId: op.id,
    verifyFirst: session.runtime.sentAt(step) !== undefined || session.runtime.stale(),
  };
  session.runtime.noteSent(step);
  if (decision === 'finalize') noteFinalize(session, amount);
  const money =
    amount !== undefined && session.state.request.money
      ? { amount, currency: session.state.request.money.currency }
      : undefined;
  try {
    const answer = await session.runtime.call(`transaction/${decision}`, () =>
      decision === 'finalize'
        ? provider.finalize({ ...args, ...(money ? { amount: money } : {}) })
        : provider[decision](args),
    );
    session.journal.log('call', decision, money ? `${money.amount} ${money.currency}` : undefined);
    session.reducer.apply(answer, 'call', `transaction/${decision}`);
  } catch (err) {
    if (failureOf(err)?.type !== FAILURE_TYPES.providerRefused) throw err;
    if (decision === 'finalize') noteFinalize(session, undefined);
    session.journal.log('call', `${decision}_refused`, failureOf(err)?.message);
    await session.runtime.poll();
    throw err;
  }
}

/** The provider waits for a partner decision that paysaga may still send (and can release a hold). */
export function cancelable(session: Session): boolean {
  return (
    !session.isFinal() &&
    (session.state.providerPhase === 'awaiting_approval' ||
      session.state.providerPhase === 'awaiting_finalization')
  );
}

/**
 * paysaga's own cancel (a deadline, an amount that is not what was asked): the reason is the cause of
 * the end once the provider confirms. Refused (the provider moved on meanwhile): the state decides.
 */
export async function cancelOwn(session: Session, cause: EndReason): Promise<void> {
  if (!cancelable(session)) return;
  const set = session.reducer.noteCause(cause);
  // Marked as a decision in progress, so that a partner's decision arriving meanwhile is refused.
  session.decision.begin('cancel');
  try {
    await carryOut(session, 'cancel');
  } catch (err) {
    if (failureOf(err)?.type !== FAILURE_TYPES.providerRefused) throw err;
    if (set) session.reducer.withdrawCause(cause);
  } finally {
    session.decision.end();
  }
}

/** Registers the decisions this kind accepts, each validated against the policy, phase and amount. */
export function acceptDecisions(session: Session, accepted: readonly Decision[]): void {
  const decide = (decision: Decision, run: () => Promise<void>) =>
    session.decision.run(async () => {
      session.decision.begin(decision);
      try {
        await run();
        return session.answer();
      } finally {
        session.decision.end();
      }
    });
  if (accepted.includes('approve'))
    wf.setHandler(approveUpdate, () => decide('approve', () => carryOut(session, 'approve')), {
      validator: (arg) => {
        const { payout } = checkArgument(approveRequest, arg) ?? {};
        mayDecide(session, 'approve');
        decidesOn(session, payout);
      },
    });
  if (accepted.includes('finalize'))
    wf.setHandler(
      finalizeUpdate,
      ({ amount }) => decide('finalize', () => carryOut(session, 'finalize', amount)),
      {
        validator: (arg) =>
          mayDecide(session, 'finalize', checkArgument(finalizeRequest, arg).amount as number),
      },
    );
  if (accepted.includes('cancel'))
    wf.setHandler(
      cancelUpdate,
      ({ reason: words }) =>
        decide('cancel', async () => {
          const why = reason('canceled_by_partner', words);
          const set = session.reducer.noteCause(why);
          try {
            await carryOut(session, 'cancel');
          } catch (err) {
            if (set) session.reducer.withdrawCause(why);
            throw err;
          }
        }),
      {
        validator: (arg) => {
          const { payout } = checkArgument(sessionCancelRequest, arg);
          mayDecide(session, 'cancel', undefined, arg);
          decidesOn(session, payout);
        },
      },
    );
}

/** A decision that names a payout is for that payout only: the one waiting must be it. */
function decidesOn(session: Session, payout: string | undefined): void {
  if (payout === undefined) return;
  const payouts = session.view().payouts;
  if (!payouts)
    throw stateConflict('only a payout session names a payout', {
      code: 'not_accepted',
      phase: session.phase,
    });
  const waiting = payouts.find((p) => p.status === 'awaiting_approval');
  if (waiting?.reference !== payout)
    throw stateConflict(
      `payout ${payout} does not wait for a decision${waiting ? ` (payout ${waiting.reference} does)` : ''}`,
      { code: 'payout_not_waiting', phase: session.phase },
    );
}

const PHASE_OF: Record<Exclude<Decision, 'cancel'>, SessionPhase> = {
  approve: 'awaiting_approval',
  finalize: 'awaiting_finalization',
};

function mayDecide(session: Session, decision: Decision, amount?: number, arg?: unknown): void {
  const phase = session.state.providerPhase;
  const conflict = (message: string, code: StateConflictCode) =>
    stateConflict(message, { code, phase: session.phase });
  if (session.isFinal())
    throw conflict(`the session has ended (${session.phase}); there is nothing to decide`, 'session_final');
  if (session.decision.inProgress)
    throw conflict(
      `a ${session.decision.inProgress} decision is already being carried out`,
      'decision_in_progress',
    );
  const { approval, finalization } = session.state.settings;
  if (decision === 'cancel') {
    if (arg !== undefined && (typeof arg !== 'object' || arg === null))
      throw invalidArgument('(body)', 'an object with an optional reason');
    const manualHere =
      (phase === 'awaiting_approval' && approval.mode === 'manual') ||
      (phase === 'awaiting_finalization' && finalization.mode === 'manual');
    if (!manualHere)
      throw conflict(
        `cancel is possible only while the session waits for a manual approval or finalization (now ${session.phase})`,
        'not_cancelable',
      );
    return;
  }
  const policy = decision === 'approve' ? approval : finalization;
  if (policy.mode !== 'manual')
    throw conflict(
      `${decision} is automatic for this session (policy ${policy.mode})`,
      decision === 'approve' ? 'approve_automatic' : 'finalize_automatic',
    );
  if (phase !== PHASE_OF[decision])
    throw conflict(
      `${decision} is possible only in ${PHASE_OF[decision]} (now ${session.phase})`,
      decision === 'approve' ? 'not_awaiting_approval' : 'not_awaiting_finalization',
    );
  if (decision === 'finalize' && amount !== undefined) {
    if (!Number.isSafeInteger(amount) || amount <= 0)
      throw invalidArgument('amount', 'a positive integer (minor units)');
    const held = operationOf(session.state.snapshot)?.sum_info?.sum;
    // What is held is the session's state: the same amount may finalize another hold.
    if (held !== undefined && amount > held)
      throw conflict(`amount: at most the held amount ${held}`, 'exceeds_held');
  }
}

/**
 * Waits for a manual decision until `deadline`; a decision in flight is carried out by its Update. When
 * the provider still waits at the deadline, paysaga cancels (a hold is released, not abandoned).
 */
async function partnerDecision(
  session: Session,
  phase: SessionPhase,
  deadline: number,
  what: string,
): Promise<void> {
  const moved = () => session.state.providerPhase !== phase || session.isFinal();
  for (;;) {
    await session.runtime.until(() => moved() || session.decision.inProgress !== undefined, deadline);
    await session.runtime.rest(() => session.decision.inProgress === undefined);
    if (moved()) return;
    if (Date.now() >= deadline) {
      await cancelOwn(session, reason('decision_deadline', `no ${what} decision in time`));
      return;
    }
  }
}

/** An automatic decision the provider refuses: release what can be released, the state decides the rest. */
/** Why paysaga canceled after the provider refused its automatic decision. */
const REFUSED = { approve: 'approve_refused', finalize: 'finalize_refused' } as const;

async function automatic(session: Session, decision: keyof typeof REFUSED, amount?: number): Promise<void> {
  try {
    await carryOut(session, decision, amount);
  } catch (err) {
    if (failureOf(err)?.type !== FAILURE_TYPES.providerRefused) throw err;
    await cancelOwn(session, reason(REFUSED[decision], failureOf(err)?.message));
  }
}

/**
 * Approval: the provider asks (approve_pending) unless the account approves by itself. Auto policy
 * approves at once; manual waits for the partner until the decision deadline, then cancels. An amount that
 * is not what was asked is never approved.
 */
export async function approval(session: Session, deadline: number): Promise<void> {
  await session.runtime.until(
    () =>
      session.state.providerPhase === 'awaiting_approval' ||
      pastApproval(session.state.snapshot) ||
      session.isFinal(),
    deadline,
  );
  if (session.state.providerPhase !== 'awaiting_approval' || session.isFinal()) return;
  const mismatch = session.reducer.amountProblem();
  const policy = session.state.settings.approval;
  if (mismatch) await cancelOwn(session, reason('amount_mismatch', mismatch));
  else if (policy.mode === 'auto') await automatic(session, 'approve');
  else
    await partnerDecision(
      session,
      'awaiting_approval',
      Math.min(Date.now() + policy.deadlineMs, deadline),
      'approve',
    );
  await session.runtime.until(
    () => session.state.providerPhase !== 'awaiting_approval' || session.isFinal(),
    deadline,
  );
}

/**
 * Finalization of a hold (finalization_pending): in full, in part (auto_partial), or by the partner
 * (manual, with a deadline after which the hold is released).
 */
export async function finalization(session: Session, deadline: number): Promise<void> {
  await session.runtime.until(
    () => session.state.providerPhase === 'awaiting_finalization' || session.isFinal(),
    deadline,
  );
  if (session.state.providerPhase !== 'awaiting_finalization' || session.isFinal()) return;
  const mismatch = session.reducer.amountProblem();
  const policy = session.state.settings.finalization;
  if (mismatch) await cancelOwn(session, reason('amount_mismatch', mismatch));
  else if (policy.mode === 'auto') await automatic(session, 'finalize');
  else if (policy.mode === 'auto_partial') await automatic(session, 'finalize', policy.amount);
  else
    await partnerDecision(
      session,
      'awaiting_finalization',
      Math.min(Date.now() + policy.deadlineMs, deadline),
      'finalize',
    );
  await session.runtime.until(
    () => session.state.providerPhase !== 'awaiting_finalization' || session.isFinal(),
    deadline,
  );
}
