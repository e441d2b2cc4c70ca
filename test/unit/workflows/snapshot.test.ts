import type { SessionInfo } from '../../../provider/schemas';
import { amountMismatch, isNewer, operationsOf, phaseOf } from '../../../common/snapshot';

const at = (n: number) => `2026-11-22T05:00:${String(n).padStart(2, '0')}.000000Z`;
const payment = (status: string, extra: object = {}) => ({
  id: 'pm_1',
  transaction_status: status,
  sum_info: { sum: 1000, currency_code: 'rub' },
  ...extra,
});
const snap = (status: string, updated: number, payments: object[] = [], extra: object = {}): SessionInfo =>
  ({ id: 'ps_1', transaction_status: status, updated_at: at(updated), payments, ...extra }) as SessionInfo;

describe('isNewer: states apply only forward', () => {
  it('takes the first snapshot and a later one', () => {
    const a = snap('active', 1, [payment('pending')], { next_step: 'approve' });
    expect(isNewer(a, undefined)).toBe(true);
    expect(isNewer(snap('active', 2, [payment('ongoing')]), a)).toBe(true);
  });
  it('ignores a duplicate and an older (reordered) snapshot', () => {
    const a = snap('active', 2, [payment('ongoing')]);
    expect(isNewer({ ...a }, a)).toBe(false);
    expect(isNewer(snap('active', 1, [payment('pending')], { next_step: 'approve' }), a)).toBe(false);
  });
  it('never leaves a final state for an earlier one, even with a newer timestamp', () => {
    const done = snap('completed', 5, [payment('successful')]);
    expect(isNewer(snap('active', 6, [payment('ongoing')]), done)).toBe(false);
  });
  it('a refund after completion is progress', () => {
    const done = snap('completed', 5, [payment('successful')]);
    const refunded = snap('completed', 6, [
      payment('successful', { moneyback: [{ id: 'rf_1', transaction_status: 'completed' }] }),
    ]);
    expect(isNewer(refunded, done)).toBe(true);
  });
  it('a renewed FPS payment after qr_expired is progress although the session reopens', () => {
    const expired = snap('canceled', 5, [payment('unsuccessful', { error: { error_code: 'qr_expired' } })]);
    const renewed = snap('active', 6, [payment('unsuccessful'), { ...payment('pending'), id: 'pm_2' }], {
      next_step: 'approve',
    });
    expect(isNewer(renewed, expired)).toBe(true);
  });
  it('a snapshot of another session is never applied', () => {
    expect(isNewer({ ...snap('active', 9), id: 'ps_2' }, snap('created', 1))).toBe(false);
  });
});

describe('phaseOf', () => {
  it.each([
    [snap('created', 1), 'starting'],
    [snap('active', 1, [payment('pending')], { next_step: 'approve' }), 'awaiting_approval'],
    // being prepared by the provider: nothing to decide yet
    [snap('active', 1, [payment('pending')]), 'processing'],
    [snap('active', 1, [payment('pending')], { next_step: 'finalize' }), 'awaiting_finalization'],
    [
      snap('active', 1, [payment('ongoing', { user_action: { type: 'destination_info' } })]),
      'awaiting_payer',
    ],
    [snap('ongoing', 1, [payment('ongoing')]), 'processing'],
    [snap('completed', 1, [payment('successful')]), 'succeeded'],
    [snap('canceled', 1, [payment('unsuccessful')]), 'failed'],
    [
      snap('canceled', 1, [payment('unsuccessful', { error: { error_code: 'canceled_by_partner' } })]),
      'canceled',
    ],
  ])('%#', (s, phase) => expect(phaseOf(s)).toBe(phase));
});

describe('amountMismatch', () => {
  const s = snap('active', 1, [payment('pending')]);
  const charged = (sum: number) =>
    snap('completed', 2, [{ ...payment('successful'), sum_info: { sum, currency_code: 'rub' } }]);
  it('accepts the amount sent, and the amount of a partial finalize once charged', () => {
    expect(amountMismatch(s, { amount: 1000, currency: 'rub' })).toBeUndefined();
    expect(amountMismatch(charged(400), { amount: 1000, currency: 'rub' }, 400)).toBeUndefined();
    expect(amountMismatch(charged(1000), { amount: 1000, currency: 'rub' })).toBeUndefined();
  });
  it('finds an over-capture after a partial finalize, also in a final snapshot', () => {
    expect(amountMismatch(charged(1000), { amount: 1000, currency: 'rub' }, 400)).toMatch(
      /charged 1000 after a finalize of 400/,
    );
  });
  it('names a different amount or currency', () => {
    expect(amountMismatch(s, { amount: 999, currency: 'rub' })).toMatch(/amount 1000 differs from 999/);
    expect(amountMismatch(s, { amount: 1000, currency: 'usd' })).toMatch(/currency rub differs from usd/);
  });
});

it('operationsOf lists payments, refunds and chargebacks', () => {
  const s = snap('completed', 1, [
    payment('successful', {
      moneyback: [
        { id: 'rf_1', transaction_status: 'completed', sum_info: { sum: 10, currency_code: 'rub' } },
        { id: 'rf_2', transaction_status: 'repaid', chargeback: true },
      ],
    }),
  ]);
  expect(operationsOf(s).map((o) => `${o.kind}:${o.id}:${o.status}`)).toEqual([
    'payment:pm_1:successful',
    'refund:rf_1:completed',
    'chargeback:rf_2:repaid',
  ]);
});

it('a held payment awaiting finalization (pending) follows its approval (ongoing)', () => {
  const approved = snap('ongoing', 2, [payment('ongoing')]);
  const held = snap('active', 3, [payment('pending')], { next_step: 'finalize' });
  expect(isNewer(held, approved)).toBe(true);
  expect(phaseOf(held)).toBe('awaiting_finalization');
  expect(isNewer(approved, held)).toBe(false);
});

it("operationsOf reports the provider's fee in either form of fee_info, and none without it", () => {
  const rub = (sum: number) => ({ sum, currency_code: 'rub' });
  const s = snap('completed', 1, [
    payment('successful', { fee_info: { fee: { merchant_fee: rub(15) } } }),
    { ...payment('successful', { fee_info: { gross: rub(1000), net: rub(970) } }), id: 'pm_2' },
    { ...payment('successful'), id: 'pm_3' },
  ]);
  expect(operationsOf(s).map((o) => o.fee)).toEqual([15, 30, undefined]);
  expect('fee' in operationsOf(s)[2]!).toBe(false);
});

describe('a payment and a later split made by the provider', () => {
  const split = { ...payment('pending'), id: 'pm_2', sum_info: { sum: 400, currency_code: 'rub' } };
  const paid = snap('active', 7, [payment('successful'), split]);
  it('is shown operation by operation', () => {
    expect(operationsOf(paid).map((o) => [o.id, o.status, o.amount])).toEqual([
      ['pm_1', 'successful', 1000],
      ['pm_2', 'pending', 400],
    ]);
  });
  it("never takes the split for the session's result or amount", () => {
    expect(phaseOf(paid)).toBe('succeeded');
    expect(amountMismatch(paid, { amount: 1000, currency: 'rub' })).toBeUndefined();
  });
  it('an FPS payment renewed after its QR expired is still the latest payment', () => {
    const renewed = snap('active', 6, [payment('unsuccessful'), { ...payment('pending'), id: 'pm_2' }], {
      next_step: 'approve',
    });
    expect(phaseOf(renewed)).toBe('awaiting_approval');
  });
});
