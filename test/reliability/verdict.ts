/**
 * The verdict of a reliability run (pure: evidence in, violations out). The provider's truth decides:
 *
 *  - every session is final, and what it says is what the provider shows: its phase (succeeded exactly
 *    when the provider's operation succeeded), and its totals (captured, refunded, charged back, paid out)
 *    against the sandbox's ledger;
 *  - no money moved twice: no ledger movement twice for one operation, no order paid in two provider
 *    sessions, no subscription period charged twice, no money moved in a session nobody knows;
 *  - no session is final while the provider still holds money for it (a hold neither charged nor released,
 *    an operation still under way);
 *  - refunds: each one paysaga shows is the provider's, each one the provider made is shown once;
 *  - decisions paysaga took (200, or 202 accepted) were carried out at the provider;
 *  - the same reference always named the same session;
 *  - no workflow failed, was terminated or timed out; none is stuck; no subscription is left running;
 *  - the store's row of every session is what the API shows (so, the provider's truth too);
 *  - every event once: unique ids, each subject's sequence 1..n without a gap and in order in the feed,
 *    and a final session's final event exactly once;
 *  - the API never answered 500;
 *  - every history replays against the workers' bundle, and no workflow task failed while running
 *    (judged by the suite itself, with an operator querying every running workflow all along).
 */
import type { Session, Subscription } from '../../client/http';
import type { Payment, Payout, SessionInfo } from '../../provider/schemas';
import type { LedgerEntry } from '../../sandbox/ledger';
import { eventSubject } from '../../common/events';
import { reasonText } from '../../common/reasons';
import { isUnreadable, type Evidence } from './truth';

export const RULES = {
  not_final: 'every session final',
  differs: 'equal to the provider',
  holds_money: 'nothing final while the provider holds money',
  double_movement: 'no money moved twice',
  unknown_movement: 'no money moved outside a known session',
  refund: 'refunds as the provider made them',
  decision: 'decisions taken are carried out',
  reference: 'one reference, one session',
  subscription: 'subscriptions end, each period charged at most once',
  workflow: 'no workflow failed, terminated, timed out or stuck',
  internal_error: 'no 500 from the API',
  unreadable: 'every session readable',
  store: "the store's row is the session",
  events: 'every event once, none lost',
  unreplayable: 'every history replays (looking never hurts)',
  workflow_task_failed: 'no workflow task failed while running',
} as const;
export type Rule = keyof typeof RULES;

export interface Violation {
  rule: Rule;
  /** The session, order, subscription or workflow it is about. */
  subject: string;
  detail: string;
}

interface Moved {
  captured: number;
  refunded: number;
  chargedBack: number;
  paidOut: number;
  held: number;
  /** Held and neither charged nor released. */
  outstanding: number;
}

function moved(entries: readonly LedgerEntry[]): Moved {
  const sum = (k: LedgerEntry['kind']) =>
    entries.filter((e) => e.kind === k).reduce((n, e) => n + e.amount, 0);
  const held = sum('hold');
  return {
    captured: sum('capture') + sum('charge'),
    refunded: sum('refund'),
    chargedBack: sum('chargeback'),
    paidOut: sum('payout'),
    held,
    outstanding: held - sum('capture') - sum('release'),
  };
}

function operations(s: SessionInfo): (Payment | Payout)[] {
  return [...(s.payments ?? []), ...(s.payouts ?? [])];
}

/** The order a provider session pays for (extra_info.order, as the suite sends it). */
export function orderOf(s: SessionInfo | undefined): string | undefined {
  for (const op of s ? operations(s) : []) {
    const order = (op.extra_info as { order?: unknown } | undefined)?.order;
    if (typeof order === 'string') return order;
  }
  return undefined;
}

function userIdOf(s: SessionInfo | undefined): string | undefined {
  for (const op of s ? operations(s) : []) {
    const id = (op.user_info as { user_id?: unknown } | undefined)?.user_id;
    if (typeof id === 'string') return id;
  }
  return undefined;
}

export function judge(ev: Evidence): Violation[] {
  const v: Violation[] = [];
  const add = (rule: Rule, subject: string, detail: string) => v.push({ rule, subject, detail });

  const bySession = new Map<string, LedgerEntry[]>();
  for (const e of ev.ledger) bySession.set(e.sessionId, [...(bySession.get(e.sessionId) ?? []), e]);

  // --- no movement twice for one operation ---
  const seen = new Map<string, number>();
  for (const e of ev.ledger) {
    const key = `${e.sessionId} ${e.operationId}${e.refundId ? ` ${e.refundId}` : ''} ${e.kind}`;
    seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  for (const [key, n] of seen)
    if (n > 1)
      add(
        'double_movement',
        key.split(' ')[0]!,
        `the ledger shows ${key.split(' ').slice(1).join(' ')} ${n} times`,
      );

  // --- which session is whose ---
  const orderSessions = new Map<string, string[]>(); // reference -> sessions the run knows for it
  for (const r of ev.journal.sessions) {
    if (r.sessionIds.length > 1)
      add(
        'reference',
        r.plan.reference,
        `one reference named ${r.sessionIds.length} sessions: ${r.sessionIds.join(', ')}`,
      );
    orderSessions.set(r.plan.reference, [...r.sessionIds]);
  }
  const charges = new Map<string, { subscription: string; period: number; attempt: number }>();
  for (const [id, s] of ev.subscriptions)
    if (!isUnreadable(s))
      for (const c of (s as Subscription).charges)
        charges.set(c.sessionId, { subscription: id, period: c.period, attempt: c.attempt });
  const known = new Set<string>([...[...orderSessions.values()].flat(), ...charges.keys()]);

  // Money moved in a session the run does not know: whose order, if any, it pays.
  for (const [sessionId, entries] of bySession) {
    if (known.has(sessionId)) continue;
    const m = moved(entries);
    const state = ev.provider.get(sessionId);
    const info = isUnreadable(state) ? undefined : (state as SessionInfo | undefined);
    const order = orderOf(info);
    const what = `${entries.map((e) => `${e.kind} ${e.amount}`).join(', ')}`;
    if (order && orderSessions.has(order))
      add(
        'double_movement',
        order,
        `order ${order} moved money in a second provider session ${sessionId} (${what}) besides paysaga's ${orderSessions.get(order)!.join(', ') || '(none named)'}`,
      );
    else if (userIdOf(info)?.startsWith('sub-'))
      add(
        'double_movement',
        userIdOf(info)!.slice(4),
        `subscription charged in a session it does not list: ${sessionId} (${what})`,
      );
    else if (m.captured + m.paidOut + m.refunded + m.chargedBack + m.held > 0)
      add('unknown_movement', sessionId, `money moved in a session the run does not know (${what})`);
  }
  // Two sessions of one order that both moved money (a reference that split).
  for (const [order, ids] of orderSessions) {
    const moving = ids.filter((id) => (bySession.get(id) ?? []).some((e) => e.kind !== 'release'));
    if (moving.length > 1)
      add(
        'double_movement',
        order,
        `order ${order} moved money in ${moving.length} sessions: ${moving.join(', ')}`,
      );
  }

  // --- every session: final, equal to the provider, nothing held ---
  for (const id of known) judgeSession(ev, id, bySession.get(id) ?? [], add);

  // --- refunds and decisions the partner sent ---
  for (const r of ev.journal.sessions) {
    const id = r.sessionIds[0];
    if (!id) continue;
    const view = ev.views.get(id);
    const state = ev.provider.get(id);
    if (!view || isUnreadable(view) || !state || isUnreadable(state)) continue;
    judgeRefunds(
      r.plan.reference,
      id,
      view as Session,
      state as SessionInfo,
      bySession.get(id) ?? [],
      r.refunds,
      add,
    );
    for (const d of r.decisions) {
      if (d.outcome !== 'carried_out' && d.outcome !== 'accepted') continue;
      const s = state as SessionInfo;
      const when = `${d.plan.kind}${d.plan.amount !== undefined ? ` ${d.plan.amount}` : ''} answered ${d.outcome === 'accepted' ? '202 accepted' : '200'}`;
      if (!s.actions?.[d.plan.kind]) {
        add('decision', id, `${when}, but the provider never received a ${d.plan.kind}`);
        continue;
      }
      if (d.plan.kind === 'finalize') {
        const m = moved(bySession.get(id) ?? []);
        const want = d.plan.amount ?? m.held;
        const succeeded = operations(s).some((o) => o.transaction_status === 'successful');
        if (succeeded && m.captured !== want)
          add('decision', id, `${when}, but the provider captured ${m.captured}`);
      }
    }
  }

  // --- subscriptions ---
  for (const r of ev.journal.subscriptions) {
    if (!r.subscriptionId) continue;
    const s = ev.subscriptions.get(r.subscriptionId);
    if (!s || isUnreadable(s)) {
      add(
        'unreadable',
        r.subscriptionId,
        `the subscription could not be read: ${s ? (s as { unreadable: string }).unreadable : 'missing'}`,
      );
      continue;
    }
    const sub = s as Subscription;
    if (sub.status !== 'canceled')
      add(
        'subscription',
        sub.subscriptionId,
        `${sub.status} after the run canceled it (${r.canceled ? 'cancel answered' : 'cancel never answered'})`,
      );
    for (const c of sub.charges.filter((c) => c.outcome === 'pending'))
      add(
        'subscription',
        sub.subscriptionId,
        `period ${c.period} attempt ${c.attempt} (${c.sessionId}) still pending`,
      );
    const perPeriod = new Map<number, string[]>();
    let charged = 0;
    for (const c of sub.charges) {
      const m = moved(bySession.get(c.sessionId) ?? []);
      charged += m.captured;
      if (m.captured > 0) perPeriod.set(c.period, [...(perPeriod.get(c.period) ?? []), c.sessionId]);
      const view = ev.views.get(c.sessionId);
      const phase = view && !isUnreadable(view) ? (view as Session).phase : undefined;
      if (c.outcome !== 'pending' && phase && (c.outcome === 'succeeded') !== (phase === 'succeeded'))
        add(
          'subscription',
          sub.subscriptionId,
          `period ${c.period} attempt ${c.attempt} recorded ${c.outcome}, its session ${c.sessionId} is ${phase}`,
        );
    }
    for (const [period, ids] of perPeriod)
      if (ids.length > 1)
        add(
          'double_movement',
          sub.subscriptionId,
          `period ${period} charged ${ids.length} times: ${ids.join(', ')}`,
        );
    if (charged !== sub.totals.chargedAmount)
      add(
        'subscription',
        sub.subscriptionId,
        `totals.chargedAmount ${sub.totals.chargedAmount}, the provider captured ${charged}`,
      );
  }

  judgeStore(ev, known, add);
  judgeEvents(ev, known, add);

  for (const w of ev.workflows.ended) add('workflow', w.workflowId, `${w.type} ${w.problem}`);
  for (const w of ev.workflows.stuck) add('workflow', w.workflowId, `${w.type} ${w.problem}`);
  for (const e of ev.journal.internalErrors) add('internal_error', 'API', e);
  return v;
}

type Add = (rule: Rule, subject: string, detail: string) => void;

/** What of a session its store row and the API must agree on. */
const recorded = (s: Session) =>
  JSON.stringify({
    phase: s.phase,
    final: s.final,
    totals: s.totals,
    refunds: s.refunds.map((r) => `${r.reference} ${r.status} ${r.amount}`),
    version: s.version,
  });

function judgeStore(ev: Evidence, known: Set<string>, add: Add): void {
  for (const id of known) {
    const view = ev.views.get(id);
    const row = ev.stored.get(id);
    if (!view || isUnreadable(view)) continue; // judged as unreadable already
    if (!row || isUnreadable(row)) {
      add('store', id, `no store row: ${row ? (row as { unreadable: string }).unreadable : 'never read'}`);
      continue;
    }
    if (recorded(row as Session) !== recorded(view as Session))
      add(
        'store',
        id,
        `the store holds ${recorded(row as Session)}, the API shows ${recorded(view as Session)}`,
      );
  }
}

function judgeEvents(ev: Evidence, known: Set<string>, add: Add): void {
  if (isUnreadable(ev.events)) return add('events', 'GET /v1/events', ev.events.unreadable);
  const ids = new Map<string, number>();
  const bySubject = new Map<string, number[]>();
  for (const e of ev.events) {
    ids.set(e.id, (ids.get(e.id) ?? 0) + 1);
    const subject = eventSubject(e);
    bySubject.set(subject, [...(bySubject.get(subject) ?? []), e.sequence]);
  }
  for (const [id, n] of ids) if (n > 1) add('events', id, `listed ${n} times in the feed`);
  for (const [subject, seqs] of bySubject) {
    const sorted = [...new Set(seqs)].sort((a, b) => a - b);
    const missing = Array.from({ length: sorted.at(-1)! }, (_, i) => i + 1).filter(
      (n) => !sorted.includes(n),
    );
    if (missing.length > 0) add('events', subject, `sequence ${missing.join(', ')} missing from the feed`);
    if (seqs.some((n, i) => i > 0 && n < seqs[i - 1]!))
      add('events', subject, `out of order in the feed: ${seqs.join(', ')}`);
  }
  for (const id of known) {
    const view = ev.views.get(id);
    if (!view || isUnreadable(view) || !(view as Session).final) continue;
    const type = `session.${(view as Session).phase}`;
    const n = ev.events.filter((e) => e.session_id === id && e.type === type).length;
    if (n !== 1) add('events', id, `${type} is in the feed ${n} times`);
  }
}

function judgeSession(
  ev: Evidence,
  id: string,
  entries: LedgerEntry[],
  add: (rule: Rule, subject: string, detail: string) => void,
): void {
  const view = ev.views.get(id);
  const state = ev.provider.get(id);
  if (!view || isUnreadable(view))
    return add(
      'unreadable',
      id,
      `paysaga could not show it: ${view ? (view as { unreadable: string }).unreadable : 'never read'}`,
    );
  if (!state || isUnreadable(state))
    return add(
      'unreadable',
      id,
      `the provider could not show it: ${state ? (state as { unreadable: string }).unreadable : 'never read'}`,
    );
  const s = view as Session;
  const p = state as SessionInfo;
  const m = moved(entries);
  const ops = operations(p);
  const last = ops.at(-1);
  const succeeded = ops.some((o) => o.transaction_status === 'successful');
  const opOpen =
    !!last && last.transaction_status !== 'successful' && last.transaction_status !== 'unsuccessful';
  const provider = `the provider shows ${p.transaction_status}${last ? `/${last.transaction_status}` : ' with no operation'}`;

  if (!s.final) {
    add('not_final', id, `${s.phase}${s.attention ? ` (${reasonText(s.attention)})` : ''}; ${provider}`);
    return;
  }
  if (m.outstanding > 0)
    add(
      'holds_money',
      id,
      `${s.phase}, but ${m.outstanding} of a hold of ${m.held} is neither charged nor released`,
    );
  else if (opOpen && !succeeded) add('holds_money', id, `${s.phase}, but ${provider}`);
  if ((s.phase === 'succeeded') !== succeeded) add('differs', id, `${s.phase}, but ${provider}`);
  for (const [what, mine, theirs] of [
    ['captured', s.totals.captured, m.captured],
    ['refunded', s.totals.refunded, m.refunded],
    ['chargedBack', s.totals.chargedBack, m.chargedBack],
    ['paidOut', s.totals.paidOut, m.paidOut],
  ] as const)
    if (mine !== theirs) add('differs', id, `totals.${what} ${mine}, the provider's ledger ${theirs}`);
  for (const r of s.refunds)
    if (r.status !== 'succeeded' && r.status !== 'failed')
      add('not_final', id, `refund ${r.reference} is ${r.status}`);
}

function judgeRefunds(
  order: string,
  id: string,
  view: Session,
  state: SessionInfo,
  entries: LedgerEntry[],
  asked: Evidence['journal']['sessions'][number]['refunds'],
  add: (rule: Rule, subject: string, detail: string) => void,
): void {
  const records = (state.payments ?? []).flatMap((p) => p.moneyback ?? []).filter((m) => !m.chargeback);
  const done = records.filter((m) => m.transaction_status === 'completed');
  const shown = new Map(view.refunds.filter((r) => r.refundId).map((r) => [r.refundId!, r]));
  for (const m of done) {
    const r = shown.get(m.id);
    if (!r)
      add(
        'refund',
        id,
        `the provider completed refund ${m.id} (${m.sum_info?.sum ?? '?'}) that paysaga does not show`,
      );
    else if (r.status !== 'succeeded')
      add('refund', id, `refund ${r.reference} shows ${r.status}, the provider completed ${m.id}`);
  }
  for (const r of view.refunds.filter((x) => x.status === 'succeeded')) {
    if (!r.refundId || !done.some((m) => m.id === r.refundId))
      add(
        'refund',
        id,
        `refund ${r.reference} shows succeeded, the provider has no completed refund ${r.refundId ?? '(no id)'}`,
      );
  }
  const m = moved(entries);
  if (m.refunded + m.chargedBack > m.captured)
    add('double_movement', order, `${id} returned ${m.refunded + m.chargedBack} of ${m.captured} captured`);
  for (const a of asked)
    if (a.outcome === 'taken' && !view.refunds.some((r) => r.reference === a.reference))
      add('refund', id, `refund ${a.reference} was taken (2xx) but the session does not show it`);
}
