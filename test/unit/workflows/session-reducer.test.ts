/**
 * The session's rules without Temporal (workflows/session/reducer.ts): a state, a clock and a list of
 * effects. Each phase rule: forward only, final once final, drift after the result, the reason of an end,
 * the amount check, attention, money back and payouts announced once, events numbered in order.
 */
import { reason } from '../../../common/reasons';
import { DEFAULT_SETTINGS } from '../../../common/settings';
import { newSessionState, type PayoutOrder, type SessionState } from '../../../common/session-input';
import type { SessionInfo } from '../../../provider/schemas';
import { SessionReducer, type Effect, type Reading } from '../../../workflows/session/reducer';

const T0 = Date.parse('2026-11-27T10:00:00.000Z');

function sessionState(extra: Partial<SessionState> = {}): SessionState {
  const request = { money: { amount: 1000, currency: 'rub' } };
  const base = { sessionId: 'ps_1', kind: 'card_checkout' as const, reference: 'order-1', request };
  return {
    ...newSessionState({ ...base, settings: DEFAULT_SETTINGS }, new Date(T0).toISOString()),
    ...extra,
  };
}

/** A reducer over a fresh state, its clock (advanced one second per snapshot) and what it emitted. */
function setup(extra: Partial<SessionState> = {}, reading?: Reading) {
  const st = sessionState(extra);
  const effects: Effect[] = [];
  let now = T0;
  const rules = new SessionReducer(st, { now: () => now, emit: (e) => effects.push(e), reading });
  let second = 0;
  /** A snapshot of the card payment, `updated_at` one second after the last. */
  const snap = (status: string, payment: object | undefined, extra: object = {}): SessionInfo => {
    now = T0 + ++second * 1000;
    return {
      id: 'ps_1',
      transaction_status: status,
      updated_at: new Date(now).toISOString(),
      payments: payment ? [{ id: 'pm_1', sum_info: { sum: 1000, currency_code: 'RUB' }, ...payment }] : [],
      ...extra,
    } as SessionInfo;
  };
  const events = () => effects.flatMap((e) => (e.kind === 'event' ? [e.event.type] : []));
  const searched = () =>
    effects.flatMap((e) => (e.kind === 'search' ? e.attributes.map((a) => a.value) : []));
  return { st, rules, effects, snap, events, searched };
}

describe('the session reducer', () => {
  it('applies a newer snapshot only: older, duplicate and other sessions change nothing', () => {
    const { st, rules, snap } = setup();
    const older = snap('active', { transaction_status: 'ongoing' });
    const newer = snap('active', { transaction_status: 'ongoing', user_action: { type: 'redirect' } });
    expect(rules.apply(newer, 'poll')).toBe(true);
    const version = st.version;
    expect(rules.apply(older, 'webhook')).toBe(false);
    expect(rules.apply(newer, 'webhook')).toBe(false);
    expect(
      rules.apply({ ...snap('completed', { transaction_status: 'successful' }), id: 'ps_2' }, 'poll'),
    ).toBe(false);
    expect(st.snapshot).toBe(newer);
    expect(st.version).toBe(version);
  });

  it('follows the provider until the result, which is final and announced once with its search attribute', () => {
    const { st, rules, snap, events, effects } = setup();
    rules.apply(snap('active', { transaction_status: 'pending' }, { next_step: 'approve' }), 'poll');
    expect(st.providerPhase).toBe('awaiting_approval');
    rules.apply(snap('active', { transaction_status: 'ongoing' }), 'webhook');
    expect(rules.journal.phase).toBe('processing');
    rules.apply(snap('completed', { transaction_status: 'successful' }), 'webhook');
    expect(st.final).toEqual({ phase: 'succeeded', at: expect.any(String) });
    expect(events()).toEqual(['session.awaiting_approval', 'session.succeeded']);
    expect(effects.filter((e) => e.kind === 'settled')).toEqual([{ kind: 'settled', phase: 'succeeded' }]);
    // The result's search attribute, then its event, then the subscription (if any) is told.
    const last = effects.slice(-4).map((e) => (e.kind === 'search' ? e.attributes[0]!.value : e.kind));
    expect(last).toEqual(['succeeded', 'event', 'settled', 'succeeded']);
  });

  it('an end other than success keeps its reason: the provider code, read by the kind, or the first cause', () => {
    const failed = { transaction_status: 'unsuccessful', error: { error_code: 'insufficient_funds' } };
    const plain = setup();
    plain.rules.apply(plain.snap('completed', failed), 'poll');
    expect(plain.st.final).toEqual({
      phase: 'failed',
      at: expect.any(String),
      reason: { code: 'provider_error', providerCode: 'insufficient_funds' },
    });

    const explained = setup({}, { explain: (code) => reason('identity_check_failed', `code ${code}`) });
    explained.rules.apply(explained.snap('completed', failed), 'poll');
    expect(explained.st.final?.reason).toEqual({
      code: 'identity_check_failed',
      detail: 'code insufficient_funds',
    });

    const caused = setup();
    const deadline = reason('decision_deadline', 'no approve decision in time');
    expect(caused.rules.noteCause(deadline)).toBe(true);
    expect(caused.rules.noteCause(reason('session_deadline'))).toBe(false);
    caused.rules.apply(
      caused.snap('completed', { ...failed, error: { error_code: 'canceled_by_partner' } }),
      'poll',
    );
    expect(caused.st.final).toMatchObject({ phase: 'canceled', reason: deadline });
    expect(caused.events()).toEqual(['session.canceled']);
  });

  it('forget takes back a cause whose action did not happen; nothing changes a final session', () => {
    const { st, rules, snap, events } = setup();
    rules.noteCause(reason('approve_refused', 'refused'));
    // Another cause is not this one: it stays.
    rules.withdrawCause(reason('approve_refused', 'another refusal'));
    expect(st.reason).toEqual({ code: 'approve_refused', detail: 'refused' });
    rules.withdrawCause(reason('approve_refused', 'refused'));
    expect(st.reason).toBeUndefined();
    rules.apply(snap('completed', { transaction_status: 'successful' }), 'poll');
    const final = st.final;
    expect(rules.noteCause(reason('session_deadline'))).toBe(false);
    rules.settle('failed', reason('session_deadline', 'too late'));
    expect(st.final).toBe(final);
    expect(st.final?.reason).toBeUndefined();
    expect(events()).toEqual(['session.succeeded']);
  });

  it('final is final: a later contradicting state is drift (attention and an event), never a new result', () => {
    const { st, rules, snap, events } = setup();
    rules.apply(snap('completed', { transaction_status: 'successful' }), 'poll');
    // Later, the provider shows the payment unsuccessful and a second one too: it says failed now.
    const drifted = snap('completed', undefined, {
      payments: ['pm_1', 'pm_2'].map((id) => ({
        id,
        transaction_status: 'unsuccessful',
        sum_info: { sum: 1000, currency_code: 'RUB' },
      })),
    });
    rules.apply(drifted, 'webhook');
    expect(st.final?.phase).toBe('succeeded');
    expect(rules.journal.phase).toBe('succeeded');
    expect(st.attention).toEqual({
      code: 'drift',
      detail: 'the provider now shows failed, the session ended succeeded',
      since: expect.any(String),
    });
    expect(events()).toEqual(['session.succeeded', 'session.needs_attention', 'session.drift_detected']);
  });

  it('an operation begun after a session ended without one is drift: the provider may hold money for it', () => {
    const { st, rules, snap, events } = setup();
    rules.apply(snap('active', undefined), 'poll');
    rules.settle('canceled', reason('not_started', 'card data was never submitted'));
    // Still no operation: nothing contradicts the result.
    rules.apply(snap('active', undefined), 'poll');
    expect(st.attention).toBeUndefined();
    // Then a hold appears, waiting for the partner's finalize.
    rules.apply(snap('active', { transaction_status: 'pending' }, { next_step: 'finalize' }), 'poll');
    expect(st.final?.phase).toBe('canceled');
    expect(st.attention).toEqual({
      code: 'drift',
      detail: 'the provider now shows awaiting_finalization, the session ended canceled',
      since: expect.any(String),
    });
    expect(events()).toEqual(['session.canceled', 'session.needs_attention', 'session.drift_detected']);
  });

  it('an amount not asked for is a cause and attention that the result does not clear', () => {
    const { st, rules, snap } = setup();
    const wrong = (status: string) => ({
      transaction_status: status,
      sum_info: { sum: 999, currency_code: 'RUB' },
    });
    rules.apply(snap('active', wrong('ongoing')), 'poll');
    const mismatch = { code: 'amount_mismatch', detail: 'amount 999 differs from 1000' };
    expect(st.attention).toEqual({ ...mismatch, since: expect.any(String) });
    expect(st.reason).toEqual(mismatch);
    expect(rules.journal.phase).toBe('needs_attention');
    rules.apply(snap('completed', wrong('successful')), 'poll');
    expect(st.final?.phase).toBe('succeeded');
    expect(st.attention).toMatchObject(mismatch);
    expect(rules.mismatchOf(st.snapshot)).toBe('amount 999 differs from 1000');
  });

  it('attention: needs_attention before the result with its search attribute, cleared by the result', () => {
    const { st, rules, snap, events, searched, effects } = setup();
    const unavailable = reason('provider_call_failing', 'the provider is unavailable', {
      subject: 'transaction/state',
    });
    rules.journal.needsAttention(unavailable);
    rules.journal.needsAttention({ ...unavailable });
    expect(rules.journal.phase).toBe('needs_attention');
    expect(effects.filter((e) => e.kind === 'attention')).toHaveLength(1);
    rules.apply(snap('completed', { transaction_status: 'successful' }), 'poll');
    expect(st.attention).toBeUndefined();
    expect(events()).toEqual(['session.needs_attention', 'session.succeeded']);
    expect(searched()).toEqual([true, 'needs_attention', false, 'succeeded', 'succeeded']);
  });

  it('refunds and chargebacks are announced once each when done, also after the result', () => {
    const { rules, snap, events } = setup();
    const paid = { transaction_status: 'successful' };
    rules.apply(snap('completed', paid), 'poll');
    const back = (status: string, chargeback = false) => ({
      id: chargeback ? 'cb_1' : 'rf_1',
      transaction_status: status,
      sum_info: { sum: 400, currency_code: 'RUB' },
      ...(chargeback ? { chargeback: true } : {}),
    });
    rules.apply(snap('completed', { ...paid, moneyback: [back('ongoing')] }), 'webhook');
    rules.apply(snap('completed', { ...paid, moneyback: [back('completed')] }), 'webhook');
    rules.apply(
      snap('completed', { ...paid, moneyback: [back('completed'), back('completed', true)] }),
      'poll',
    );
    rules.apply(snap('completed', { ...paid, moneyback: [back('completed'), back('repaid', true)] }), 'poll');
    expect(events()).toEqual(['session.succeeded', 'session.refunded', 'session.chargeback']);
  });

  it('events are numbered in order and carry the session as it was when each happened', () => {
    const { st, rules, snap, effects } = setup();
    rules.journal.announce('session.created');
    rules.apply(snap('active', { transaction_status: 'pending' }, { next_step: 'approve' }), 'call');
    rules.apply(snap('completed', { transaction_status: 'successful' }), 'webhook');
    const sent = effects.flatMap((e) => (e.kind === 'event' ? [e.event] : []));
    expect(sent.map((e) => [e.id, e.sequence, (e.data as { phase: string }).phase])).toEqual([
      ['evt_ps_1_1', 1, 'starting'],
      ['evt_ps_1_2', 2, 'awaiting_approval'],
      ['evt_ps_1_3', 3, 'succeeded'],
    ]);
    expect(st.eventSequence).toBe(3);
    expect(
      sent.every((e) => !('lastSnapshot' in (e.data as object)) && !('events' in (e.data as object))),
    ).toBe(true);
  });

  it('reread: a changed reading of the same snapshot moves the phase (an FPS QR that will not be renewed)', () => {
    let renewable = true;
    const reading: Reading = {
      phase: (s) =>
        renewable && s?.payments?.[0]?.transaction_status === 'unsuccessful' ? 'awaiting_payer' : 'failed',
    };
    const { st, rules, snap } = setup({}, reading);
    rules.apply(
      snap('active', { transaction_status: 'unsuccessful', error: { error_code: 'qr_expired' } }),
      'poll',
    );
    expect(st.providerPhase).toBe('awaiting_payer');
    renewable = false;
    rules.reread();
    expect(st.final).toMatchObject({
      phase: 'failed',
      reason: { code: 'provider_error', providerCode: 'qr_expired' },
    });
  });

  it('several payouts: each announced once as it ends, naming it; the session ends with the last', () => {
    const order = (reference: string, amount: number, extra: Partial<PayoutOrder> = {}): PayoutOrder => ({
      reference,
      money: { amount, currency: 'rub' },
      addedAt: new Date(T0).toISOString(),
      ...extra,
    });
    const { st, rules, snap, effects } = setup({
      kind: 'payout',
      request: { money: { amount: 300, currency: 'rub' } },
      payouts: [order('a', 100, { first: true }), order('b', 200, { payoutId: 'po_2' })],
    });
    const payout = (id: string, status: string, sum: number) => ({
      id,
      transaction_status: status,
      sum_info: { sum, currency_code: 'RUB' },
    });
    rules.apply(snap('active', undefined, { payouts: [payout('po_1', 'successful', 100)] }), 'poll');
    expect(st.final).toBeUndefined();
    const both = [payout('po_1', 'successful', 100), payout('po_2', 'unsuccessful', 200)];
    rules.apply(snap('completed', undefined, { payouts: both }), 'poll');
    const sent = effects.flatMap((e) => (e.kind === 'event' ? [e.event] : []));
    expect(
      sent.map((e) => [e.type, (e.data as { operation?: { reference: string } }).operation?.reference]),
    ).toEqual([
      ['session.payout_succeeded', 'a'],
      ['session.payout_failed', 'b'],
      ['session.succeeded', undefined],
    ]);
    expect(st.final?.phase).toBe('succeeded');
  });
});
