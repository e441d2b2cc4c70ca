/**
 * The reliability suite's verdict (test/reliability/verdict.ts) on evidence written by hand: a run where
 * everything holds passes, and each way money or truth can go wrong fails under its rule, naming the
 * session, order, subscription or workflow.
 */
import type { Session, Subscription } from '../../client/http';
import type { PaysagaEvent } from '../../common/events';
import type { SessionInfo } from '../../provider/schemas';
import type { LedgerEntry } from '../../sandbox/ledger';
import { newJournal } from '../reliability/journal';
import { makePlan } from '../reliability/plan';
import { PROFILES } from '../reliability/profiles';
import type { Evidence } from '../reliability/truth';
import { judge, type Rule } from '../reliability/verdict';

const plan = makePlan(PROFILES.tiny, 'unit');
const order = plan.sessions[0]!.reference;

function session(id: string, o: Partial<Session> = {}): Session {
  return {
    sessionId: id,
    kind: 'card_checkout',
    reference: order,
    phase: 'succeeded',
    final: true,
    request: { approval: 'auto', finalization: 'auto', webhooks: true },
    totals: { held: 0, captured: 1000, refunded: 0, chargedBack: 0, paidOut: 0, net: 1000 },
    operations: [],
    refunds: [],
    events: [],
    version: 5,
    createdAt: '2026-01-01T00:00:00Z',
    links: { self: '', temporal: '' },
    ...o,
  } as Session;
}

function providerState(
  id: string,
  o: {
    status?: string;
    op?: string;
    order?: string;
    moneyback?: unknown[];
    actions?: Record<string, string>;
  } = {},
): SessionInfo {
  return {
    id,
    transaction_status: o.status ?? 'completed',
    actions: o.actions,
    payments: [
      {
        id: `pm_${id}`,
        transaction_status: o.op ?? 'successful',
        sum_info: { sum: 1000, currency_code: 'rub' },
        extra_info: { order: o.order ?? order },
        user_info: { user_id: 'u-0' },
        ...(o.moneyback ? { moneyback: o.moneyback } : {}),
      },
    ],
  } as unknown as SessionInfo;
}

let seq = 0;
const entry = (
  sessionId: string,
  kind: LedgerEntry['kind'],
  amount: number,
  refundId?: string,
): LedgerEntry => ({
  seq: ++seq,
  at: '',
  projectId: 'p',
  sessionId,
  operationId: `pm_${sessionId}`,
  ...(refundId ? { refundId } : {}),
  kind,
  amount,
  currency: 'rub',
});

function event(sessionId: string, sequence: number, type: PaysagaEvent['type']): PaysagaEvent {
  return { id: `evt_${sessionId}_${sequence}`, type, created: '', session_id: sessionId, sequence, data: {} };
}

/** One card checkout of 1000, held and captured, everything as it should be. */
function clean(): Evidence {
  const journal = newJournal(plan.sessions.slice(0, 1), []);
  journal.sessions[0]!.sessionIds = ['ps_1'];
  journal.sessions[0]!.created = true;
  const views = new Map<string, Session | { unreadable: string }>([['ps_1', session('ps_1')]]);
  const ev = {
    plan,
    journal,
    chaos: { windows: [], disruptions: [] },
    views,
    // Unless a test says otherwise, the store holds what the API shows (the same map), and the feed has
    // each final session's created and final events.
    stored: views,
    subscriptions: new Map(),
    provider: new Map([['ps_1', providerState('ps_1')]]),
    ledger: [entry('ps_1', 'hold', 1000), entry('ps_1', 'capture', 1000)],
    faultRules: [],
    workflows: { ended: [], stuck: [], counts: {} },
  } as Omit<Evidence, 'events'> as Evidence;
  let events: Evidence['events'] | undefined;
  Object.defineProperty(ev, 'events', {
    enumerable: true,
    get: () =>
      events ??
      [...views.values()].flatMap((v) =>
        'sessionId' in v && v.final
          ? [
              event(v.sessionId, 1, 'session.created'),
              event(v.sessionId, 2, `session.${v.phase}` as PaysagaEvent['type']),
            ]
          : [],
      ),
    set: (e: Evidence['events']) => {
      events = e;
    },
  });
  return ev;
}

const rules = (ev: Evidence) => judge(ev).map((v) => [v.rule, v.subject] as [Rule, string]);

describe('the verdict of a reliability run', () => {
  test('a run where everything holds has no violation', () => {
    expect(judge(clean())).toEqual([]);
  });

  test('a movement twice for one operation in the ledger', () => {
    const ev = clean();
    ev.ledger.push(entry('ps_1', 'capture', 1000));
    expect(judge(ev)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          rule: 'double_movement',
          subject: 'ps_1',
          detail: expect.stringContaining('capture 2 times'),
        }),
      ]),
    );
  });

  test('an order charged again in a provider session paysaga does not know: the order and that session are named', () => {
    const ev = clean();
    ev.provider.set('ps_9', providerState('ps_9'));
    ev.ledger.push(entry('ps_9', 'hold', 1000), entry('ps_9', 'capture', 1000));
    const v = judge(ev);
    expect(v).toEqual([
      expect.objectContaining({
        rule: 'double_movement',
        subject: order,
        detail: expect.stringContaining('ps_9'),
      }),
    ]);
    expect(v[0]!.detail).toContain('ps_1');
  });

  test('money moved in a session nobody knows, for no known order', () => {
    const ev = clean();
    ev.provider.set('ps_8', providerState('ps_8', { order: 'someone-else' }));
    ev.ledger.push(entry('ps_8', 'payout', 500));
    expect(rules(ev)).toEqual([['unknown_movement', 'ps_8']]);
  });

  test('a session that is not final, or final while the provider still holds money or works', () => {
    const open = clean();
    open.views.set(
      'ps_1',
      session('ps_1', { final: false, phase: 'needs_attention', attention: { code: 'drift', since: '' } }),
    );
    expect(rules(open)).toEqual([['not_final', 'ps_1']]);

    const held = clean();
    held.ledger = [entry('ps_1', 'hold', 1000)];
    held.views.set(
      'ps_1',
      session('ps_1', { phase: 'canceled', totals: { ...session('ps_1').totals, captured: 0 } }),
    );
    held.provider.set('ps_1', providerState('ps_1', { status: 'active', op: 'pending' }));
    expect(rules(held)).toEqual([['holds_money', 'ps_1']]);
  });

  test('a phase or totals that are not the provider’s', () => {
    const phase = clean();
    phase.provider.set('ps_1', providerState('ps_1', { status: 'canceled', op: 'unsuccessful' }));
    phase.ledger = [entry('ps_1', 'hold', 1000), entry('ps_1', 'release', 1000)];
    phase.views.set('ps_1', session('ps_1', { totals: { ...session('ps_1').totals, captured: 0 } }));
    expect(rules(phase)).toEqual([['differs', 'ps_1']]);

    const totals = clean();
    totals.ledger = [
      entry('ps_1', 'hold', 1000),
      entry('ps_1', 'capture', 400),
      entry('ps_1', 'release', 600),
    ];
    expect(judge(totals)).toEqual([
      expect.objectContaining({ rule: 'differs', detail: "totals.captured 1000, the provider's ledger 400" }),
    ]);
  });

  test('refunds: one the provider made that paysaga does not show, one paysaga shows that the provider never made', () => {
    const ev = clean();
    ev.provider.set(
      'ps_1',
      providerState('ps_1', {
        moneyback: [{ id: 'rf_1', transaction_status: 'completed', sum_info: { sum: 300 } }],
      }),
    );
    ev.ledger.push(entry('ps_1', 'refund', 300, 'rf_1'));
    ev.views.set(
      'ps_1',
      session('ps_1', {
        totals: { ...session('ps_1').totals, refunded: 300 },
        refunds: [
          {
            reference: 'x-r1',
            amount: 300,
            currency: 'rub',
            status: 'succeeded',
            refundId: 'rf_2',
            requestedAt: '',
          },
        ],
      }),
    );
    expect(judge(ev).map((v) => v.detail)).toEqual([
      'the provider completed refund rf_1 (300) that paysaga does not show',
      'refund x-r1 shows succeeded, the provider has no completed refund rf_2',
    ]);
  });

  test('a decision answered 200 or 202 that the provider never received', () => {
    const ev = clean();
    ev.journal.sessions[0]!.decisions.push({
      plan: { kind: 'cancel', moment: 'asked', afterMs: 0 },
      answers: [{ at: 0, status: 202 }],
      outcome: 'accepted',
    });
    expect(rules(ev)).toEqual([['decision', 'ps_1']]);
    ev.provider.set('ps_1', providerState('ps_1', { actions: { cancel: 'now' } }));
    expect(rules(ev)).toEqual([]);
  });

  test('one reference that named two sessions', () => {
    const ev = clean();
    ev.journal.sessions[0]!.sessionIds.push('ps_2');
    ev.views.set('ps_2', session('ps_2'));
    ev.provider.set('ps_2', providerState('ps_2'));
    ev.ledger.push(entry('ps_2', 'hold', 1000), entry('ps_2', 'capture', 1000));
    expect(rules(ev)).toEqual([
      ['reference', order],
      ['double_movement', order],
    ]);
  });

  test('a subscription period charged twice, and one left running', () => {
    const ev = clean();
    const sub = {
      subscriptionId: 'sub-x',
      status: 'active',
      charges: [
        {
          period: 1,
          attempt: 0,
          sessionId: 'ps_5',
          amount: 100,
          currency: 'rub',
          outcome: 'succeeded',
          startedAt: '',
        },
        {
          period: 1,
          attempt: 1,
          sessionId: 'ps_6',
          amount: 100,
          currency: 'rub',
          outcome: 'succeeded',
          startedAt: '',
        },
      ],
      totals: { attempts: 2, succeeded: 2, failed: 0, chargedAmount: 200 },
    } as unknown as Subscription;
    ev.journal.subscriptions.push({
      plan: plan.subscriptions[0]!,
      subscriptionId: 'sub-x',
      answers: [],
      canceled: true,
    });
    ev.subscriptions.set('sub-x', sub);
    for (const id of ['ps_5', 'ps_6']) {
      ev.views.set(id, session(id, { totals: { ...session(id).totals, captured: 100 } }));
      ev.provider.set(id, providerState(id, { order: 'sub' }));
      ev.ledger.push(entry(id, 'hold', 100), entry(id, 'capture', 100));
    }
    expect(rules(ev)).toEqual([
      ['subscription', 'sub-x'],
      ['double_movement', 'sub-x'],
    ]);
  });

  test('a workflow that failed or is stuck, and a 500 from the API', () => {
    const ev = clean();
    ev.workflows.ended.push({ workflowId: 'ps_1', type: 'checkoutWorkflow', problem: 'failed' });
    ev.workflows.stuck.push({
      workflowId: 'ps_3',
      type: 'payoutWorkflow',
      problem: 'its workflow task failed 5 times in a row',
    });
    ev.journal.internalErrors.push('POST /v1/checkouts: internal_error');
    expect(rules(ev)).toEqual([
      ['workflow', 'ps_1'],
      ['workflow', 'ps_3'],
      ['internal_error', 'API'],
    ]);
  });

  test('a store row that is not the session the API shows (a record lost in an outage)', () => {
    const ev = clean();
    ev.stored = new Map([['ps_1', session('ps_1', { phase: 'awaiting_payer', final: false, version: 3 })]]);
    expect(rules(ev)).toEqual([['store', 'ps_1']]);
    ev.stored.delete('ps_1');
    expect(judge(ev)).toEqual([
      expect.objectContaining({ rule: 'store', detail: expect.stringContaining('no store row') }),
    ]);
  });

  test('events: one listed twice, one lost, one out of order, a final event missing or twice', () => {
    const twice = clean();
    twice.events = [...(twice.events as PaysagaEvent[]), event('ps_1', 2, 'session.succeeded')];
    expect(judge(twice).map((v) => v.detail)).toEqual(
      expect.arrayContaining(['listed 2 times in the feed', 'session.succeeded is in the feed 2 times']),
    );
    expect(rules(twice).every(([rule]) => rule === 'events')).toBe(true);

    const lost = clean();
    lost.events = [event('ps_1', 2, 'session.succeeded')];
    expect(judge(lost)).toEqual([
      expect.objectContaining({
        rule: 'events',
        subject: 'ps_1',
        detail: 'sequence 1 missing from the feed',
      }),
    ]);

    const reordered = clean();
    reordered.events = [event('ps_1', 2, 'session.succeeded'), event('ps_1', 1, 'session.created')];
    expect(judge(reordered)).toEqual([
      expect.objectContaining({ rule: 'events', detail: expect.stringContaining('out of order') }),
    ]);

    const silent = clean();
    silent.events = [event('ps_1', 1, 'session.created')];
    expect(judge(silent)).toEqual([
      expect.objectContaining({ rule: 'events', detail: 'session.succeeded is in the feed 0 times' }),
    ]);

    const unread = clean();
    unread.events = { unreadable: 'the event feed after 0 events: 503' };
    expect(rules(unread)).toEqual([['events', 'GET /v1/events']]);
  });
});
