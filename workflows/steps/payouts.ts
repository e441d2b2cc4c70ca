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
      const created = !s.state.payouts?.some((o) => o.reference === reference);
      if (created) addPayout(s, { reference, money, body, addedAt: iso(Date.now()) });
      return { session: s.view(), created };
    },
    { validator: (arg) => mayAdd(s, checkArgument(payoutRequest, arg)) },
  );
}

/**
 * Adds a payout to the session; a session of one payout takes it as its second, its own payout first.
 * What the session asks for is then every payout together (the view's money, the amount searched by).
 */
function addPayout(s: Session, order: PayoutOrder): void {
  const st = s.state;
  st.payouts ??= [
    {
      reference: st.reference,
      money: st.request.money ?? { amount: 0, currency: order.money.currency },
      addedAt: st.createdAt,
      first: true,
    },
  ];
  st.payouts.push(order);
  const total = st.payouts.reduce((n, o) => n + o.money.amount, 0);
  st.request = { ...st.request, money: { amount: total, currency: order.money.currency } };
  s.record.worth(total);
  s.rules.payoutsChanged('payout_added', `${order.reference}: ${order.money.amount} ${order.money.currency}`);
}

function mayAdd(s: Session, r: PayoutRequest & { body: { sum_info: { sum: number } } }): void {
  const earlier = s.state.payouts?.find((o) => o.reference === r.reference);
  if (earlier) {
    if (earlier.first || !samePayout(earlier, r))
      throw referenceConflict(
        `already names a payout of ${earlier.money.amount} ${earlier.money.currency} in this session`,
      );
    return;
  }
  if (!s.state.payouts && r.reference === s.state.reference)
    throw referenceConflict("the session's reference names its first payout");
  if (s.isFinal())
    throw stateConflict(`the session has ended (${s.phase}); another payout needs a session of its own`, {
      code: 'session_final',
      phase: s.phase,
    });
  if ((s.state.payouts?.length ?? 1) >= PAYOUT_LIMITS.perSession)
    throw stateConflict(`a session holds at most ${PAYOUT_LIMITS.perSession} payouts`, {
      code: 'too_many_payouts',
      phase: s.phase,
    });
  const currency = s.state.request.money?.currency;
  if (currency && r.money.currency !== currency)
    throw stateConflict(`amount.currency: the session's currency (${currency})`, {
      code: 'currency_mismatch',
      phase: s.phase,
    });
  if (r.body.sum_info.sum !== r.money.amount) throw invalidArgument('body.sum_info.sum', 'the payout amount');
}

/** The payout being worked on has ended (or the whole session has): the next one may go. */
export function currentPayoutEnded(s: Session): boolean {
  return s.isFinal() || (s.state.payouts !== undefined && payoutEnded(s.state.snapshot, s.state.payouts));
}

/**
 * Sends the next queued payout; a payout the provider refuses ends `failed` and the one after it goes.
 * False when none is left (the session then ends with its payouts).
 */
export async function startNextPayout(s: Session): Promise<boolean> {
  for (;;) {
    const order = s.state.payouts && !s.isFinal() ? nextQueued(s.state.snapshot, s.state.payouts) : undefined;
    if (!order) return false;
    if (await sendPayout(s, order)) return true;
  }
}

async function sendPayout(s: Session, order: PayoutOrder): Promise<boolean> {
  const step = stepName({ kind: 'payout', reference: order.reference });
  const knownBefore = (order.knownBefore ??= (s.state.snapshot?.payouts ?? []).map((p) => p.id));
  const args = {
    ...s.runtime.callArgs(),
    verifyFirst: s.runtime.sentAt(step) !== undefined || s.runtime.stale(),
  };
  s.runtime.noteSent(step);
  s.rules.payoutsChanged('payout_sent', order.reference);
  try {
    const answer = await s.runtime.call('start/transfer', () =>
      provider.startPayout({
        ...args,
        body: order.body!,
        reference: order.reference,
        knownPayoutIds: knownBefore,
      }),
    );
    order.payoutId ??= newPayoutId(answer, knownBefore);
    s.rules.apply(answer, 'call', 'start/transfer');
    s.rules.payoutsChanged(
      'payout_started',
      `${order.reference}${order.payoutId ? ` ${order.payoutId}` : ''}`,
    );
    return true;
  } catch (err) {
    const refusal = refusalOf(err);
    order.refused = refusal;
    s.rules.payoutsChanged('payout_refused', `${order.reference}: ${refusal.errorCode}`);
    return false;
  }
}
