/**
 * Several payouts in one session, read from the provider's snapshot (common/payouts.ts): each payout's
 * status and reason, the session's phase over all of them, and the amount check per payout.
 */
import {
  currentPayout,
  nextQueued,
  payoutEnded,
  payoutReason,
  payoutsMismatch,
  payoutsPhase,
  payoutsReason,
  payoutStatus,
} from '../../../common/payouts';
import { reason } from '../../../common/reasons';
import { phaseOf } from '../../../common/snapshot';
import type { SessionInfo } from '../../../provider/schemas';
import type { PayoutOrder } from '../../../common/session-input';

const rub = (amount: number) => ({ amount, currency: 'rub' });
const order = (reference: string, amount: number, extra: Partial<PayoutOrder> = {}): PayoutOrder => ({
  reference,
  money: rub(amount),
  addedAt: '2026-11-27T00:00:00.000Z',
  ...extra,
});
const payout = (id: string, status: string, sum: number, error?: string) => ({
  id,
  transaction_status: status,
  sum_info: { sum, currency_code: 'RUB' },
  ...(error ? { error: { error_code: error } } : {}),
});
const snap = (status: string, payouts: object[], extra: object = {}): SessionInfo =>
  ({ id: 'ps_1', transaction_status: status, payouts, ...extra }) as SessionInfo;

describe('several payouts in one session', () => {
  const orders = [
    order('a', 100, { payoutId: 'po_1' }),
    order('b', 200, { knownBefore: ['po_1'] }),
    order('c', 300),
  ];

  it('each payout has its own status; the session follows the one being worked on', () => {
    const s = snap(
      'active',
      [payout('po_1', 'unsuccessful', 100, 'canceled_by_partner'), payout('po_2', 'pending', 200)],
      {
        next_step: 'approve',
      },
    );
    expect(orders.map((o) => payoutStatus(o, s))).toEqual(['canceled', 'awaiting_approval', 'queued']);
    expect(payoutsPhase(s, orders, phaseOf)).toBe('awaiting_approval');
    expect(currentPayout(s, orders)?.reference).toBe('b');
    expect(nextQueued(s, orders)).toBeUndefined();
    expect(payoutEnded(s, orders)).toBe(false);
  });

  it('a sent payout whose answer was not heard yet is the new record (a webhook may come first)', () => {
    const s = snap('active', [payout('po_1', 'successful', 100), payout('po_7', 'ongoing', 200)]);
    expect(payoutStatus(orders[1]!, s)).toBe('processing');
    expect(payoutsPhase(s, orders, phaseOf)).toBe('processing');
  });

  it('the next payout goes once the one before it has ended; a queued one keeps the session open', () => {
    const s = snap('completed', [
      payout('po_1', 'successful', 100),
      payout('po_2', 'unsuccessful', 200, 'payout_declined'),
    ]);
    expect(payoutsPhase(s, orders, phaseOf)).toBe('processing');
    expect(payoutEnded(s, orders)).toBe(true);
    expect(nextQueued(s, orders)?.reference).toBe('c');
  });

  it('final once every payout is: succeeded if any paid out, canceled if all were canceled, else failed', () => {
    const two = orders.slice(0, 2);
    const ok = snap('completed', [
      payout('po_1', 'successful', 100),
      payout('po_2', 'unsuccessful', 200, 'payout_declined'),
    ]);
    expect(payoutsPhase(ok, two, phaseOf)).toBe('succeeded');
    const none = snap('canceled', [
      payout('po_1', 'unsuccessful', 100, 'canceled_by_partner'),
      payout('po_2', 'unsuccessful', 200, 'payout_declined'),
    ]);
    expect(payoutsPhase(none, two, phaseOf)).toBe('failed');
    // Each payout's own reason is in its view; the session's says them all in words.
    expect(payoutsReason(none, two)).toEqual({
      code: 'payouts_unsuccessful',
      detail: 'a: provider_error (canceled_by_partner); b: provider_error (payout_declined)',
    });
    const canceled = snap('canceled', [
      payout('po_1', 'unsuccessful', 100, 'canceled_by_partner'),
      payout('po_2', 'unsuccessful', 200, 'canceled_by_partner'),
    ]);
    expect(payoutsPhase(canceled, two, phaseOf)).toBe('canceled');
  });

  it("a refused start ends that payout failed with the provider's reason; paysaga's own reason comes first", () => {
    const refused = order('r', 10, {
      refused: {
        endpoint: 'transaction/start/transfer',
        errorCode: 'invalid_request',
        description: 'payout_info.invalid',
      },
    });
    expect(payoutStatus(refused, undefined)).toBe('failed');
    expect(payoutReason(refused, undefined)).toEqual({
      code: 'start_failed',
      providerCode: 'invalid_request',
      detail: 'payout_info.invalid',
    });
    const deadline = reason('decision_deadline', 'no approve decision in time');
    const own = order('a', 100, { payoutId: 'po_1', reason: deadline });
    const s = snap('canceled', [payout('po_1', 'unsuccessful', 100, 'canceled_by_partner')]);
    expect(payoutReason(own, s)).toEqual(deadline);
    // Without a reason of paysaga's own, the provider's error code is the reason.
    const theirs = order('b', 100, { payoutId: 'po_1' });
    expect(payoutReason(theirs, s)).toEqual({ code: 'provider_error', providerCode: 'canceled_by_partner' });
  });

  it('checks each payout against its own amount', () => {
    const s = snap('active', [payout('po_1', 'successful', 100), payout('po_2', 'pending', 250)], {
      next_step: 'approve',
    });
    expect(payoutsMismatch(s, orders)).toBe('payout b: amount 250 differs from 200');
    expect(payoutsMismatch(snap('active', [payout('po_1', 'successful', 100)]), orders)).toBeUndefined();
  });

  it("a session of one payout that takes another: its own payout is the provider's first record", () => {
    const first = order('session-ref', 500, { first: true });
    expect(payoutStatus(first, snap('created', []))).toBe('starting');
    expect(
      payoutStatus(first, snap('active', [payout('po_1', 'pending', 500)], { next_step: 'approve' })),
    ).toBe('awaiting_approval');
  });
});

describe('a run that continued as new while a payout was being sent', () => {
  it('sends it again (under its key, after a look) rather than taking it for started', () => {
    const sent = [order('a', 100, { payoutId: 'po_1' }), order('b', 200, { knownBefore: ['po_1'] })];
    const s = {
      id: 'ps_1',
      transaction_status: 'canceled',
      payouts: [{ id: 'po_1', transaction_status: 'unsuccessful' }],
    } as SessionInfo;
    expect(payoutStatus(sent[1]!, s)).toBe('starting');
    expect(nextQueued(s, sent)?.reference).toBe('b');
    // The session's own first payout is started by the session's start, never from the queue.
    expect(nextQueued(undefined, [order('x', 1, { first: true }), order('y', 2)])).toBeUndefined();
  });
});
