/**
 * After the result (docs/decisions/010-one-truth-final-is-final.md, 012-the-session-is-one-resource.md): the
 * session's workflow keeps following it for a while
 * (`followMs`). Refunds the partner asks for are carried out one at a time, each bounded by what is
 * left; refunds and chargebacks the provider reports are recorded as events of the session, never as a
 * rewrite of its outcome; the provider is read again now and then (webhooks may be off). A later change
 * opens the session again in a new run that carries everything.
 */
import { HandlerUnfinishedPolicy } from '@temporalio/common';
import * as wf from '@temporalio/workflow';
import {
  FAILURE_TYPES,
  failureOf,
  invalidArgument,
  providerRefused,
  referenceConflict,
  stateConflict,
  type ProviderRefusal,
} from '../../common/failures';
import { refundUpdate } from '../../common/messages';
import { checkArgument, refundRequest } from '../../common/message-schemas';
import { jsonBoundsProblem, REFUND_EXTRA_INFO_BOUNDS } from '../../common/json-bounds';
import { reason, reasonText } from '../../common/reasons';
import type { RefundRecord } from '../../common/session-input';
import { refundRecordOf, stepName } from '../../common/steps';
import { provider } from '../calls';
import type { Session } from '../session';
import { moneybackOf } from '../../common/snapshot';
import { carryOut } from './decisions';
import { iso } from '../iso';

const REFERENCE = /^[A-Za-z0-9._:-]{4,64}$/;

/** What can still be refunded: captured, less chargebacks, less every refund made or asked for. */
export function refundable(session: Session): number {
  const view = session.view();
  const asked = session.state.refunds.filter((r) => r.status !== 'failed');
  const ours = new Set(asked.map((r) => r.refundId).filter((id): id is string => !!id));
  const elsewhere = moneybackOf(session.state.snapshot).filter(
    (m) => !ours.has(m.id) && m.transaction_status !== 'unsuccessful',
  );
  return (
    view.totals.captured -
    elsewhere.reduce((n, m) => n + (m.sum_info?.sum ?? 0), 0) -
    asked.reduce((n, r) => n + r.amount, 0)
  );
}

/** A refund the partner asked for: kept in the session's state until it is done (or failed). */
function addRefund(session: Session, refund: RefundRecord): void {
  session.state.refunds.push(refund);
  session.journal.log(
    'partner',
    'refund_requested',
    `${refund.reference}: ${refund.amount} ${refund.currency}`,
  );
}

function updateRefund(session: Session, reference: string, change: Partial<RefundRecord>): void {
  const r = session.state.refunds.find((x) => x.reference === reference);
  if (!r) return;
  Object.assign(r, change);
  const why = r.reason ? `: ${reasonText(r.reason)}` : '';
  const detail = `${reference}${r.refundId ? ` ${r.refundId}` : ''}${why}`;
  session.journal.log('call', `refund_${r.status}`, detail);
}

/** When following the finished session ends (set once, carried across runs). */
function followUntil(session: Session): number {
  session.state.followUntil ??= Date.now() + session.state.settings.followMs;
  return session.state.followUntil;
}

/** Registers the refund Update (payment kinds only). */
export function acceptRefunds(session: Session): void {
  wf.setHandler(
    refundUpdate,
    async ({ reference, amount, extraInfo }) => {
      const created = !session.state.refunds.some((r) => r.reference === reference);
      if (created) {
        const currency = session.view().totals.currency ?? session.state.request.money?.currency ?? '';
        addRefund(session, {
          reference,
          amount: amount ?? refundable(session),
          currency,
          status: 'requested',
          requestedAt: iso(Date.now()),
          ...(extraInfo !== undefined ? { extraInfo } : {}),
        });
      }
      await wf.condition(
        () => session.state.refunds.find((r) => r.reference === reference)?.status !== 'requested',
      );
      // Answered once stored, refused or not: a caller reads the refund in the session next.
      const view = await session.answer();
      const refusal = session.state.refunds.find((r) => r.reference === reference)?.refusal;
      if (refusal) throw providerRefused(refusal);
      return { session: view, created };
    },
    {
      validator: (arg) => {
        const { reference, amount, extraInfo } = checkArgument(refundRequest, arg);
        mayRefund(session, reference, amount);
        const problem = jsonBoundsProblem(extraInfo, REFUND_EXTRA_INFO_BOUNDS);
        if (problem) throw invalidArgument('extraInfo', problem);
      },
      // A run that must continue as new during a long outage leaves a waiting refund to the next run
      // (runtime.ts continueAsNewIfDue): the caller's retry of the same reference waits there.
      unfinishedPolicy: HandlerUnfinishedPolicy.ABANDON,
    },
  );
}

function mayRefund(session: Session, reference: unknown, amount: unknown): void {
  if (typeof reference !== 'string' || !REFERENCE.test(reference))
    throw invalidArgument('reference', '4 to 64 letters, digits or . _ : -');
  if (amount !== undefined && (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount <= 0))
    throw invalidArgument('amount', 'a positive integer (minor units)');
  const earlier = session.state.refunds.find((r) => r.reference === reference);
  if (earlier) {
    if (amount !== undefined && amount !== earlier.amount)
      throw referenceConflict(`already used for a refund of ${earlier.amount}`);
    return;
  }
  if (session.phase !== 'succeeded')
    throw stateConflict(`a refund needs a successful payment (the session is ${session.phase})`, {
      code: 'not_refundable',
      phase: session.phase,
    });
  const left = refundable(session);
  if (left <= 0)
    throw stateConflict('nothing is left to refund', { code: 'fully_refunded', phase: session.phase });
  if (amount !== undefined && amount > left)
    // Not a bad request: the same amount is fine on a payment with more left, so this is the session's state.
    throw stateConflict(`amount: at most ${left} is left to refund`, {
      code: 'exceeds_refundable',
      phase: session.phase,
    });
}

/** Sends one refund (key `refund:<reference>`) and follows its record to the end. */
async function carryOutRefund(session: Session, refund: RefundRecord): Promise<void> {
  const known = refund.knownBefore ?? moneybackOf(session.state.snapshot).map((m) => m.id);
  if (refund.status === 'requested') {
    refund.knownBefore = known;
    const step = stepName({ kind: 'refund', reference: refund.reference });
    const verifyFirst = session.runtime.sentAt(step) !== undefined || session.runtime.stale();
    session.runtime.noteSent(step);
    try {
      const answer = await session.runtime.call('transaction/refund', () =>
        provider.refund({
          ...session.runtime.callArgs(),
          reference: refund.reference,
          amount: { amount: refund.amount, currency: refund.currency },
          knownRefundIds: known,
          verifyFirst,
          ...(refund.extraInfo !== undefined ? { extraInfo: refund.extraInfo } : {}),
        }),
      );
      // The provider has it: the session keeps no copy (a session may take many refunds).
      delete refund.extraInfo;
      session.reducer.apply(answer, 'call', 'transaction/refund');
      const refundId = refundRecordOf(answer, known) ?? refundRecordOf(session.state.snapshot, known);
      updateRefund(session, refund.reference, { status: 'processing', ...(refundId ? { refundId } : {}) });
    } catch (err) {
      const f = failureOf(err);
      if (f?.type !== FAILURE_TYPES.providerRefused) throw err;
      delete refund.extraInfo;
      updateRefund(session, refund.reference, {
        status: 'failed',
        reason: reason('refund_refused', f.message),
        refusal: f.details as ProviderRefusal,
        finishedAt: iso(Date.now()),
      });
      return;
    }
  }
  const record = () => {
    const id = refund.refundId ?? refundRecordOf(session.state.snapshot, known);
    return moneybackOf(session.state.snapshot).find((m) => m.id === id);
  };
  const done = () => ['completed', 'repaid'].includes(record()?.transaction_status ?? '');
  if (!(await session.runtime.until(done, Date.now() + session.state.settings.deadlines.sessionMs))) {
    session.journal.needsAttention(
      reason(
        'refund_pending',
        `still ${record()?.transaction_status ?? 'unknown'} at the provider; following it`,
        { subject: refund.reference },
      ),
    );
    await session.runtime.until(done);
  }
  updateRefund(session, refund.reference, {
    status: 'succeeded',
    refundId: record()!.id,
    finishedAt: iso(Date.now()),
  });
  if (session.journal.attentionFor('refund_pending', refund.reference)) session.journal.clearAttention();
}

/**
 * Follows the finished session until `followMs` passed with nothing left to do and the session settled
 * (no Update running, none waiting for a refund to be sent): carries out refunds,
 * records what the provider reports, re-reads the state every `recheckMs`, and cancels any operation
 * that appears at approve_pending after the result (a payment form used after the payer's time ran out).
 */
export async function aftercare(session: Session): Promise<void> {
  for (;;) {
    const due = session.state.refunds.find((r) => r.status === 'requested' || r.status === 'processing');
    if (due) {
      await carryOutRefund(session, due);
      continue;
    }
    if (
      session.isFinal() &&
      session.state.providerPhase === 'awaiting_approval' &&
      session.decision.inProgress === undefined
    ) {
      session.journal.log('timer', 'late_operation', 'an operation appeared after the result: canceled');
      await carryOut(session, 'cancel').catch((err) => {
        if (failureOf(err)?.type !== FAILURE_TYPES.providerRefused) throw err;
      });
      continue;
    }
    const left = followUntil(session) - Date.now();
    // The end, once no Update runs or waits for a refund this loop must send (settled says which).
    if (left <= 0) {
      if (await session.runtime.settled()) return;
      continue;
    }
    const seen = session.state.snapshot;
    const waitMs = Math.min(left, session.state.settings.recheckMs);
    const woken = await session.runtime.waitFor(
      () => session.state.snapshot !== seen || session.runtime.owesWork() || session.inbox.lookAsked,
      waitMs,
    );
    if (session.inbox.lookAsked) await session.runtime.look();
    // A recheck is due when the wait was the recheck interval, not the end of following.
    else if (!woken && waitMs < left) await session.runtime.poll();
  }
}
