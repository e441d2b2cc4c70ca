/**
 * After the result (DESIGN decisions 10, 12): the session's workflow keeps following it for a while
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
import type { RefundRecord } from '../../common/session-input';
import { refundRecordOf, stepName } from '../../common/steps';
import { provider } from '../calls';
import type { Session } from '../session';
import { moneybackOf } from '../../common/snapshot';
import { carryOut } from './decisions';
import { iso } from '../iso';

const REFERENCE = /^[A-Za-z0-9._:-]{4,64}$/;

/** What can still be refunded: captured, less chargebacks, less every refund made or asked for. */
export function refundable(s: Session): number {
  const view = s.view();
  const asked = s.state.refunds.filter((r) => r.status !== 'failed');
  const ours = new Set(asked.map((r) => r.refundId).filter((id): id is string => !!id));
  const elsewhere = moneybackOf(s.state.snapshot).filter(
    (m) => !ours.has(m.id) && m.transaction_status !== 'unsuccessful',
  );
  return (
    view.totals.captured -
    elsewhere.reduce((n, m) => n + (m.sum_info?.sum ?? 0), 0) -
    asked.reduce((n, r) => n + r.amount, 0)
  );
}

/** A refund the partner asked for: kept in the session's state until it is done (or failed). */
function addRefund(s: Session, r: RefundRecord): void {
  s.state.refunds.push(r);
  s.record.log('partner', 'refund_requested', `${r.reference}: ${r.amount} ${r.currency}`);
}

function updateRefund(s: Session, reference: string, change: Partial<RefundRecord>): void {
  const r = s.state.refunds.find((x) => x.reference === reference);
  if (!r) return;
  Object.assign(r, change);
  const detail = `${reference}${r.refundId ? ` ${r.refundId}` : ''}${r.reason ? `: ${r.reason}` : ''}`;
  s.record.log('call', `refund_${r.status}`, detail);
}

/** When following the finished session ends (set once, carried across runs). */
function followUntil(s: Session): number {
  s.state.followUntil ??= Date.now() + s.state.settings.followMs;
  return s.state.followUntil;
}

/** Registers the refund Update (payment kinds only). */
export function acceptRefunds(s: Session): void {
  wf.setHandler(
    refundUpdate,
    async ({ reference, amount, extraInfo }) => {
      const created = !s.state.refunds.some((r) => r.reference === reference);
      if (created) {
        const currency = s.view().totals.currency ?? s.state.request.money?.currency ?? '';
        addRefund(s, {
          reference,
          amount: amount ?? refundable(s),
          currency,
          status: 'requested',
          requestedAt: iso(Date.now()),
          ...(extraInfo !== undefined ? { extraInfo } : {}),
        });
      }
      await wf.condition(
        () => s.state.refunds.find((r) => r.reference === reference)?.status !== 'requested',
      );
      const refusal = s.state.refunds.find((r) => r.reference === reference)?.refusal;
      if (refusal) throw providerRefused(refusal);
      return { session: s.view(), created };
    },
    {
      validator: (arg) => {
        const { reference, amount, extraInfo } = checkArgument(refundRequest, arg);
        mayRefund(s, reference, amount);
        const problem = jsonBoundsProblem(extraInfo, REFUND_EXTRA_INFO_BOUNDS);
        if (problem) throw invalidArgument('extraInfo', problem);
      },
      // A run that must continue as new during a long outage leaves a waiting refund to the next run
      // (runtime.ts continueAsNewIfDue): the caller's retry of the same reference waits there.
      unfinishedPolicy: HandlerUnfinishedPolicy.ABANDON,
    },
  );
}

function mayRefund(s: Session, reference: unknown, amount: unknown): void {
  if (typeof reference !== 'string' || !REFERENCE.test(reference))
    throw invalidArgument('reference', '4 to 64 letters, digits or . _ : -');
  if (amount !== undefined && (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount <= 0))
    throw invalidArgument('amount', 'a positive integer (minor units)');
  const earlier = s.state.refunds.find((r) => r.reference === reference);
  if (earlier) {
    if (amount !== undefined && amount !== earlier.amount)
      throw referenceConflict(`already used for a refund of ${earlier.amount}`);
    return;
  }
  if (s.phase !== 'succeeded')
    throw stateConflict(`a refund needs a successful payment (the session is ${s.phase})`, {
      code: 'not_refundable',
      phase: s.phase,
    });
  const left = refundable(s);
  if (left <= 0) throw stateConflict('nothing is left to refund', { code: 'fully_refunded', phase: s.phase });
  if (amount !== undefined && amount > left)
    // Not a bad request: the same amount is fine on a payment with more left, so this is the session's state.
    throw stateConflict(`amount: at most ${left} is left to refund`, {
      code: 'exceeds_refundable',
      phase: s.phase,
    });
}

/** Sends one refund (key `refund:<reference>`) and follows its record to the end. */
async function carryOutRefund(s: Session, r: RefundRecord): Promise<void> {
  const known = r.knownBefore ?? moneybackOf(s.state.snapshot).map((m) => m.id);
  if (r.status === 'requested') {
    r.knownBefore = known;
    const step = stepName({ kind: 'refund', reference: r.reference });
    const verifyFirst = s.runtime.sentAt(step) !== undefined || s.runtime.stale();
    s.runtime.noteSent(step);
    try {
      const answer = await s.runtime.call('transaction/refund', () =>
        provider.refund({
          ...s.runtime.callArgs(),
          reference: r.reference,
          amount: { amount: r.amount, currency: r.currency },
          knownRefundIds: known,
          verifyFirst,
          ...(r.extraInfo !== undefined ? { extraInfo: r.extraInfo } : {}),
        }),
      );
      // The provider has it: the session keeps no copy (a session may take many refunds).
      delete r.extraInfo;
      s.rules.apply(answer, 'call', 'transaction/refund');
      const refundId = refundRecordOf(answer, known) ?? refundRecordOf(s.state.snapshot, known);
      updateRefund(s, r.reference, { status: 'processing', ...(refundId ? { refundId } : {}) });
    } catch (err) {
      const f = failureOf(err);
      if (f?.type !== FAILURE_TYPES.providerRefused) throw err;
      delete r.extraInfo;
      updateRefund(s, r.reference, {
        status: 'failed',
        reason: f.message,
        refusal: f.details as ProviderRefusal,
        finishedAt: iso(Date.now()),
      });
      return;
    }
  }
  const record = () => {
    const id = r.refundId ?? refundRecordOf(s.state.snapshot, known);
    return moneybackOf(s.state.snapshot).find((m) => m.id === id);
  };
  const done = () => ['completed', 'repaid'].includes(record()?.transaction_status ?? '');
  if (!(await s.runtime.until(done, Date.now() + s.state.settings.deadlines.sessionMs))) {
    s.record.needsAttention(
      `refund ${r.reference}: still ${record()?.transaction_status ?? 'unknown'} at the provider; following it`,
    );
    await s.runtime.until(done);
  }
  updateRefund(s, r.reference, { status: 'succeeded', refundId: record()!.id, finishedAt: iso(Date.now()) });
  if (s.view().attention?.reason.startsWith(`refund ${r.reference}:`)) s.record.clearAttention();
}

/**
 * Follows the finished session until `followMs` passed with nothing left to do and the session settled
 * (no Update running, none waiting for a refund to be sent): carries out refunds,
 * records what the provider reports, re-reads the state every `recheckMs`, and cancels any operation
 * that appears at approve_pending after the result (a payment form used after the payer's time ran out).
 */
export async function aftercare(s: Session): Promise<void> {
  for (;;) {
    const due = s.state.refunds.find((r) => r.status === 'requested' || r.status === 'processing');
    if (due) {
      await carryOutRefund(s, due);
      continue;
    }
    if (
      s.isFinal() &&
      s.state.providerPhase === 'awaiting_approval' &&
      s.decisions.inProgress === undefined
    ) {
      s.record.log('timer', 'late_operation', 'an operation appeared after the result: canceled');
      await carryOut(s, 'cancel').catch((err) => {
        if (failureOf(err)?.type !== FAILURE_TYPES.providerRefused) throw err;
      });
      continue;
    }
    const left = followUntil(s) - Date.now();
    // The end, once no Update runs or waits for a refund this loop must send (settled says which).
    if (left <= 0) {
      if (await s.runtime.settled()) return;
      continue;
    }
    const seen = s.state.snapshot;
    const woken = await s.runtime.waitFor(
      () => s.state.snapshot !== seen || s.runtime.owesWork() || s.inbox.lookRequested,
      Math.min(left, s.state.settings.recheckMs),
    );
    if (s.inbox.lookRequested) await s.runtime.look();
    else if (!woken && followUntil(s) > Date.now()) await s.runtime.poll();
  }
}
