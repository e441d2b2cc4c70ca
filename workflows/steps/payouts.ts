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
export function acceptPayouts(session: Session): void {
  wf.setHandler(
    addPayoutUpdate,
    async ({ reference, money, body }) => {
      const created = !session.state.payouts?.some((o) => o.reference === reference);
      if (created) addPayout(session, { reference, money, body, addedAt: iso(Date.now()) });
      return { session: await session.answer(), created };
    },
    { validator: (arg) => mayAdd(session, checkArgument(payoutRequest, arg)) },
  );
}

/**
 * Adds a payout to the session; a session of one payout takes it as its second, its own payout first.
 * What the session asks for is then every payout together (the view's money, the amount searched by).
 */
function addPayout(session: Session, order: PayoutOrder): void {
  const state = session.state;
  state.payouts ??= [
    {
      reference: state.reference,
      money: state.request.money ?? { amount: 0, currency: order.money.currency },
      addedAt: state.createdAt,
      first: true,
    },
  ];
  state.payouts.push(order);
  const total = state.payouts.reduce((n, o) => n + o.money.amount, 0);
  state.request = { ...state.request, money: { amount: total, currency: order.money.currency } };
  session.journal.worth(total);
  session.reducer.payoutsChanged(
    'payout_added',
    `${order.reference}: ${order.money.amount} ${order.money.currency}`,
  );
}

function mayAdd(session: Session, r: PayoutRequest & { body: { sum_info: { sum: number } } }): void {
  const earlier = session.state.payouts?.find((o) => o.reference === r.reference);
  if (earlier) {
    if (earlier.first || !samePayout(earlier, r))
      throw referenceConflict(
        `already names a payout of ${earlier.money.amount} ${earlier.money.currency} in this session`,
      );
    return;
  }
  if (!session.state.payouts && r.reference === session.state.reference)
    throw referenceConflict("the session's reference names its first payout");
  if (session.isFinal())
    throw stateConflict(
      `the session has ended (${session.phase}); another payout needs a session of its own`,
      {
        code: 'session_final',
        phase: session.phase,
      },
    );
  if ((session.state.payouts?.length ?? 1) >= PAYOUT_LIMITS.perSession)
    throw stateConflict(`a session holds at most ${PAYOUT_LIMITS.perSession} payouts`, {
      code: 'too_many_payouts',
      phase: session.phase,
    });
  const currency = session.state.request.money?.currency;
  if (currency && r.money.currency !== currency)
    throw stateConflict(`amount.currency: the session's currency (${currency})`, {
      code: 'currency_mismatch',
      phase: session.phase,
    });
  if (r.body.sum_info.sum !== r.money.amount) throw invalidArgument('body.sum_info.sum', 'the payout amount');
}

/** The payout being worked on has ended (or the whole session has): the next one may go. */
export function currentPayoutEnded(session: Session): boolean {
  return (
    session.isFinal() ||
    (session.state.payouts !== undefined && payoutEnded(session.state.snapshot, session.state.payouts))
  );
}

/**
 * Sends the next queued payout; a payout the provider refuses ends `failed` and the one after it goes.
 * False when none is left (the session then ends with its payouts).
 */
export async function startNextPayout(session: Session): Promise<boolean> {
  for (;;) {
    const order =
      session.state.payouts && !session.isFinal()
        ? nextQueued(session.state.snapshot, session.state.payouts)
        : undefined;
    if (!order) return false;
    if (await sendPayout(session, order)) return true;
  }
}

async function sendPayout(session: Session, order: PayoutOrder): Promise<boolean> {
  const step = stepName({ kind: 'payout', reference: order.reference });
  const knownBefore = (order.knownBefore ??= (session.state.snapshot?.payouts ?? []).map((p) => p.id));
  const args = {
    ...session.runtime.callArgs(),
    verifyFirst: session.runtime.sentAt(step) !== undefined || session.runtime.stale(),
  };
  session.runtime.noteSent(step);
  session.reducer.payoutsChanged('payout_sent', order.reference);
  try {
    const answer = await session.runtime.call('start/transfer', () =>
      provider.startPayout({
        ...args,
        body: order.body!,
        reference: order.reference,
        knownPayoutIds: knownBefore,
      }),
    );
    order.payoutId ??= newPayoutId(answer, knownBefore);
    session.reducer.apply(answer, 'call', 'start/transfer');
    session.reducer.payoutsChanged(
      'payout_started',
      `${order.reference}${order.payoutId ? ` ${order.payoutId}` : ''}`,
    );
    return true;
  } catch (err) {
    const refusal = refusalOf(err);
    order.refused = refusal;
    session.reducer.payoutsChanged('payout_refused', `${order.reference}: ${refusal.errorCode}`);
    return false;
  }
}
