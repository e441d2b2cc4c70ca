/**
 * Several payouts in one session (common/payouts.ts). The partner adds a payout (the addPayout Update)
 * while the session has not ended; the process sends each one in turn, once every payout before it has
 * ended (the provider takes no start/transfer while another payout waits for its decision), and follows
 * it through its approval to its result like the first. The same reference is the same payout.
 */
import * as wf from '@temporalio/workflow';
import { invalidArgument, referenceConflict, refusalOf, stateConflict } from '../../common/failures';
import { addPayoutUpdate, type PayoutRequest } from '../../common/messages';
import { checkArgument, payoutRequest } from '../../common/message-schemas';
import { nextQueued, payoutEnded, PAYOUT_LIMITS, samePayout, newPayoutId } from '../../common/payouts';
import { stepName } from '../../common/steps';
import { provider } from '../calls';
import { iso } from '../iso';
import type { Session } from '../session';
import type { PayoutOrder } from '../../common/session-input';

/** Registers addPayout (payout sessions). */
export function acceptPayouts(s: Session): void {
  wf.setHandler(
    addPayoutUpdate,
    ({ reference, money, body }) => {
      const created = !s.payouts?.some((o) => o.reference === reference);
      if (created) s.addPayout({ reference, money, body, addedAt: iso(Date.now()) });
      return { session: s.view(), created };
    },
    { validator: (arg) => mayAdd(s, checkArgument(payoutRequest, arg)) },
  );
}

function mayAdd(s: Session, r: PayoutRequest & { body: { sum_info: { sum: number } } }): void {
  const earlier = s.payouts?.find((o) => o.reference === r.reference);
  if (earlier) {
    if (earlier.first || !samePayout(earlier, r))
      throw referenceConflict(
        `already names a payout of ${earlier.money.amount} ${earlier.money.currency} in this session`,
      );
    return;
  }
  if (!s.payouts && r.reference === s.view().reference)
    throw referenceConflict("the session's reference names its first payout");
  if (s.isFinal())
    throw stateConflict(`the session has ended (${s.phase}); another payout needs a session of its own`, {
      code: 'session_final',
      phase: s.phase,
    });
  if ((s.payouts?.length ?? 1) >= PAYOUT_LIMITS.perSession)
    throw stateConflict(`a session holds at most ${PAYOUT_LIMITS.perSession} payouts`, {
      code: 'too_many_payouts',
      phase: s.phase,
    });
  const currency = s.request.money?.currency;
  if (currency && r.money.currency !== currency)
    throw invalidArgument('amount.currency', `the session's currency (${currency})`);
  if (r.body.sum_info.sum !== r.money.amount) throw invalidArgument('body.sum_info.sum', 'the payout amount');
}

/** The payout being worked on has ended (or the whole session has): the next one may go. */
export function currentPayoutEnded(s: Session): boolean {
  return s.isFinal() || (s.payouts !== undefined && payoutEnded(s.snapshot, s.payouts));
}

/**
 * Sends the next queued payout; a payout the provider refuses ends `failed` and the one after it goes.
 * False when none is left (the session then ends with its payouts).
 */
export async function startNextPayout(s: Session): Promise<boolean> {
  for (;;) {
    const order = s.payouts && !s.isFinal() ? nextQueued(s.snapshot, s.payouts) : undefined;
    if (!order) return false;
    if (await sendPayout(s, order)) return true;
  }
}

async function sendPayout(s: Session, order: PayoutOrder): Promise<boolean> {
  const step = stepName({ kind: 'payout', reference: order.reference });
  const knownBefore = (order.knownBefore ??= (s.snapshot?.payouts ?? []).map((p) => p.id));
  const args = { ...s.callArgs(), verifyFirst: s.sentAt(step) !== undefined || s.stale() };
  s.noteSent(step);
  s.payoutsChanged('payout_sent', order.reference);
  try {
    const answer = await s.call('start/transfer', () =>
      provider.startPayout({
        ...args,
        body: order.body!,
        reference: order.reference,
        knownPayoutIds: knownBefore,
      }),
    );
    order.payoutId ??= newPayoutId(answer, knownBefore);
    s.apply(answer, 'call', 'start/transfer');
    s.payoutsChanged('payout_started', `${order.reference}${order.payoutId ? ` ${order.payoutId}` : ''}`);
    return true;
  } catch (err) {
    const refusal = refusalOf(err);
    order.refused = refusal;
    s.payoutsChanged('payout_refused', `${order.reference}: ${refusal.errorCode}`);
    return false;
  }
}
