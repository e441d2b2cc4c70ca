/**
 * The schedule of a reliability run, made from a profile and a seed alone (pure: the same seed gives
 * the same plan): which sessions are created when, with which policies, payers and partner decisions;
 * which faults run when and for how long; when a worker, an API or the Temporal server goes down.
 */
import type { FaultRuleInput } from '../../sandbox/faults';
import { Draws } from './draws';
import type { Profile } from './profiles';

/** The session kinds of the mix (`token`: the first card checkouts, whose recurring tokens the rest use). */
export const MIX_KINDS = [
  'card',
  'three_ds',
  'hold_partial',
  'fps',
  'payout',
  'refund',
  'recurring',
] as const;
export type MixKind = (typeof MIX_KINDS)[number];
export type PlanKind = MixKind | 'token';

const MIX_WEIGHTS: Record<MixKind, number> = {
  card: 5,
  three_ds: 2,
  hold_partial: 2,
  fps: 2,
  payout: 2,
  refund: 2,
  recurring: 1,
};

export type Approval = 'auto' | 'manual';
export type Finalization = 'auto' | 'auto_partial' | 'manual';
/** Every approval policy with every finalization policy: card checkouts go through them in turn. */
const POLICY_COMBOS: readonly [Approval, Finalization][] = [
  ['auto', 'auto'],
  ['manual', 'auto'],
  ['auto', 'manual'],
  ['manual', 'manual'],
  ['auto', 'auto_partial'],
  ['manual', 'auto_partial'],
];

export type DecisionKind = 'approve' | 'cancel' | 'finalize';

/**
 * A partner decision. `anytime`: `afterMs` after the create was answered, whatever the session shows
 * then (often too early or not allowed: the answer says why); `asked`: `afterMs` after the session
 * shows that it waits for this decision. A decision refused as too early is sent again once asked.
 */
export interface DecisionPlan {
  kind: DecisionKind;
  moment: 'anytime' | 'asked';
  afterMs: number;
  /** finalize: the amount (absent: the whole hold). */
  amount?: number;
}

export interface RefundPlan {
  /** Absent: what is left. */
  amount?: number;
  afterMs: number;
}

export type Customer = 'ok' | 'thief' | 'loser';

export interface SessionPlan {
  index: number;
  kind: PlanKind;
  /** The partner's reference: the order it pays for (also sent as extra_info.order). */
  reference: string;
  atMs: number;
  /** The API that creates it (the rest of its calls go to either). */
  api: number;
  amount: number;
  /** paysaga's side: webhooks on, or polling only (settings.polling.webhooks). */
  webhooks: boolean;
  approval: Approval;
  finalization: Finalization;
  /** auto_partial: the amount finalized. */
  partialAmount?: number;
  /** Manual policies: how long paysaga waits for the partner before it cancels. */
  decisionDeadlineMs: number;
  card?: 'frictionless' | 'three_ds' | 'declined';
  customer: Customer;
  /** 3-D Secure: passes, fails (wrong code) or never acts; FPS: pays the first QR, a renewed one, or never. */
  payer?: 'pass' | 'fail' | 'abandon' | 'pay_first' | 'pay_renewed' | 'never';
  payerDelayMs?: number;
  qrRenewals?: number;
  /** To a card, by a recurring token, or several to FPS accounts in one session (`batch` of 2 or 3). */
  payout?: 'card' | 'token' | 'batch';
  batch?: number;
  refunds: RefundPlan[];
  /** Two refunds sent at once. */
  concurrentRefunds?: boolean;
  decisions: DecisionPlan[];
  /** The same create is sent again this long after the first answer (a backend retrying). */
  repeatAfterMs?: number;
}

export interface SubscriptionPlan {
  index: number;
  reference: string;
  atMs: number;
  api: number;
  amount: number;
  intervalMs: number;
  periods: number;
  /** The payer's bank refuses every charge (customer `loser`): dunning, then the subscription ends. */
  failing: boolean;
  dunningMs: number[];
}

export const FAULT_FAMILIES = [
  'provider_5xx',
  'provider_timeout',
  'commit_drop',
  'webhook_drop',
  'webhook_duplicate',
  'webhook_reorder',
  'webhook_delay',
  'webhooks_off',
] as const;
export type FaultFamily = (typeof FAULT_FAMILIES)[number];

/** Every provider endpoint whose call can move money or make something that will: each is dropped after commit. */
export const MONEY_MOVING_ENDPOINTS = [
  'transaction/initiate',
  'transaction/init/checkout',
  'transaction/init/transfer',
  'transaction/start/checkout',
  'transaction/start/transfer',
  'transaction/approve',
  'transaction/finalize',
  'transaction/cancel',
  'transaction/refund',
] as const;

export interface FaultWindow {
  id: string;
  family: FaultFamily;
  atMs: number;
  forMs: number;
  /** Sent to the sandbox as they are (`forMs` and `label` set). */
  rules: FaultRuleInput[];
}

export type DisruptionKind = 'worker_kill' | 'api_restart' | 'temporal_restart' | 'store_restart';

export interface Disruption {
  atMs: number;
  what: DisruptionKind;
  /** Worker or API index. */
  target: number;
  signal: 'SIGKILL' | 'SIGTERM';
}

export interface Plan {
  seed: string;
  profile: Profile['name'];
  sessions: SessionPlan[];
  subscriptions: SubscriptionPlan[];
  faults: FaultWindow[];
  disruptions: Disruption[];
  /** paysaga's store down from `atMs` for `forMs` (beside the disruptions, which go one at a time). */
  storeOutage?: { atMs: number; forMs: number };
  /** When the last fault window closes (ms after the start). */
  faultsEndMs: number;
}

/** Between the two whole outages: sessions opened here are in flight through the second one. */
const OUTAGE_GAP_MS = 20_000;
/** The least time between two disruptions, so each one's recovery is its own. */
const DISRUPTION_GAP_MS = 20_000;

export function makePlan(profile: Profile, seed: string): Plan {
  const d = new Draws(seed);
  const prefix = `r${seed.replace(/[^A-Za-z0-9]/g, '').slice(0, 12)}`;
  const sessions: SessionPlan[] = [];

  for (let i = 0; i < profile.tokenSessions; i++)
    sessions.push({
      ...base(d.child(`token/${i}`), sessions.length, 'token', prefix, profile),
      atMs: 1_000 + i * 500,
      card: 'frictionless',
    });

  const span = profile.createUntilMs - profile.createFromMs;
  const policyOffset = d.int('policy-offset', 0, POLICY_COMBOS.length - 1);
  // Each kind appears at least once whenever the profile has room for all of them.
  const kinds: MixKind[] = Array.from({ length: profile.sessions }, (_, i) =>
    i < MIX_KINDS.length && profile.sessions >= MIX_KINDS.length
      ? MIX_KINDS[i]!
      : d.weighted(`kind/${i}`, MIX_WEIGHTS),
  );
  let cards = 0;
  for (let i = 0; i < profile.sessions; i++) {
    const s = d.child(`session/${i}`);
    const kind = kinds[i]!;
    const plan = base(s, sessions.length, kind, prefix, profile);
    plan.atMs = Math.round(profile.createFromMs + ((i + s.float('jitter')) * span) / profile.sessions);
    shape(
      plan,
      s,
      profile,
      kind === 'card' ? POLICY_COMBOS[(cards++ + policyOffset) % POLICY_COMBOS.length]! : undefined,
      i < MIX_KINDS.length,
    );
    sessions.push(plan);
  }

  const subscriptions: SubscriptionPlan[] = Array.from({ length: profile.subscriptions }, (_, i) => {
    const s = d.child(`subscription/${i}`);
    return {
      index: i,
      reference: `${prefix}-sub${i}`,
      atMs: profile.createFromMs + s.int('at', 0, Math.round(span / 3)),
      api: s.int('api', 0, profile.apis - 1),
      amount: s.int('amount', 100, 5_000) * 10,
      intervalMs: profile.intervalMs,
      periods: profile.periods,
      // One in six subscriptions charges a payer whose bank refuses (the first one never does).
      failing: i > 0 && s.chance('failing', 1 / 6),
      dunningMs: [Math.round(profile.intervalMs / 3), Math.round(profile.intervalMs / 2)],
    };
  });

  // Windows start spread over the fault period in a seeded order (stratified), so they overlap in part:
  // a commit-then-drop window wholly inside a provider outage would never see a request through.
  const windows = FAULT_FAMILIES.flatMap((family) =>
    Array.from({ length: profile.windowsPerFamily }, (_, w) => ({
      family,
      w,
      f: d.child(`fault/${family}/${w}`),
    })),
  ).sort((a, b) => a.f.float('order') - b.f.float('order'));
  // The two whole outages (the first window of each: every call answered 5xx, every call timing out)
  // come one after the other, with a gap: while one runs nothing can be opened, and sessions opened before
  // it, or in the gap, are the ones in flight through it.
  const range = profile.faultsUntilMs - profile.faultsFromMs;
  let outageEnd = profile.faultsFromMs;
  const outageAt = (forMs: number, fraction: number) => {
    const at = Math.min(
      profile.faultsUntilMs - forMs,
      Math.max(profile.faultsFromMs + Math.round(fraction * range), outageEnd + OUTAGE_GAP_MS),
    );
    outageEnd = at + forMs;
    return at;
  };
  const faults: FaultWindow[] = windows.map(({ family, w, f }, k) => {
    const whole = w === 0 && (family === 'provider_5xx' || family === 'provider_timeout');
    // A whole outage lasts past every retry budget, yet not so long that the run opens nothing for minutes.
    const longest = whole ? Math.min(profile.windowMs[1], profile.windowMs[0] + 30_000) : profile.windowMs[1];
    const forMs = f.int('for', profile.windowMs[0], longest);
    const room = Math.max(0, profile.faultsUntilMs - forMs - profile.faultsFromMs);
    const atMs =
      w === 0 && family === 'provider_5xx'
        ? outageAt(forMs, 0.1)
        : w === 0 && family === 'provider_timeout'
          ? -1 // placed after the 5xx outage, below
          : Math.round(profile.faultsFromMs + ((k + f.float('at')) * room) / windows.length);
    const id = `${family}#${w + 1}`;
    return {
      id,
      family,
      atMs,
      forMs,
      rules: faultRules(family, f, profile, w === 0).map((r) => ({ ...r, forMs, label: id })),
    };
  });
  const timeout = faults.find((x) => x.id === 'provider_timeout#1');
  if (timeout) timeout.atMs = outageAt(timeout.forMs, 0.55);
  // A window that would open inside a whole outage opens as it ends instead: webhooks and commits hardly
  // happen while every call fails, so such a window would test little (the last ones stay within range).
  const outages = faults.filter((x) => x.id === 'provider_5xx#1' || x.id === 'provider_timeout#1');
  for (const x of faults) {
    if (outages.includes(x)) continue;
    for (const o of [...outages].sort((a, b) => a.atMs - b.atMs))
      if (x.atMs >= o.atMs && x.atMs < o.atMs + o.forMs)
        x.atMs = Math.min(o.atMs + o.forMs, profile.faultsUntilMs - x.forMs);
  }
  faults.sort((a, b) => a.atMs - b.atMs || a.id.localeCompare(b.id));

  // The store's outage starts while sessions are being created and money moves (a third into the range)
  // and lasts its whole length, inside the faults' range when it fits.
  let storeOutage: Plan['storeOutage'];
  if (profile.storeOutageMs > 0) {
    const x = d.child('store-outage');
    const room = Math.max(0, profile.faultsUntilMs - profile.storeOutageMs - profile.faultsFromMs);
    storeOutage = {
      atMs:
        profile.faultsFromMs +
        Math.round(x.float('at') * Math.min(room, (profile.createUntilMs - profile.faultsFromMs) / 3)),
      forMs: profile.storeOutageMs,
    };
  }

  const disruptions: Disruption[] = [];
  const add = (what: DisruptionKind, n: number, targets: number) => {
    for (let k = 0; k < n; k++) {
      const x = d.child(`disruption/${what}/${k}`);
      disruptions.push({
        what,
        atMs: x.int('at', profile.faultsFromMs, profile.faultsUntilMs),
        target: k % targets,
        // Workers die without a goodbye; APIs are stopped either way; the Temporal server is stopped;
        // PostgreSQL crashes (SIGKILL stands for its immediate shutdown).
        signal:
          what === 'worker_kill' || what === 'store_restart'
            ? 'SIGKILL'
            : what === 'api_restart' && k % 2 === 0
              ? 'SIGKILL'
              : 'SIGTERM',
      });
    }
  };
  add('worker_kill', profile.workerKills, profile.workers);
  add('api_restart', profile.apiRestarts, profile.apis);
  add('temporal_restart', profile.temporalRestarts, 1);
  add('store_restart', profile.storeRestarts, 1);
  // A crash while the store is down would be no crash: it comes after the outage.
  for (const x of disruptions)
    if (storeOutage && x.what === 'store_restart' && x.atMs >= storeOutage.atMs - DISRUPTION_GAP_MS)
      x.atMs = Math.max(x.atMs, storeOutage.atMs + storeOutage.forMs + DISRUPTION_GAP_MS);
  disruptions.sort((a, b) => a.atMs - b.atMs);
  for (let k = 1; k < disruptions.length; k++)
    disruptions[k]!.atMs = Math.max(disruptions[k]!.atMs, disruptions[k - 1]!.atMs + DISRUPTION_GAP_MS);

  const faultsEndMs = Math.max(
    0,
    ...faults.map((f) => f.atMs + f.forMs),
    ...disruptions.map((x) => x.atMs),
    storeOutage ? storeOutage.atMs + storeOutage.forMs : 0,
  );
  return {
    seed,
    profile: profile.name,
    sessions,
    subscriptions,
    faults,
    disruptions,
    storeOutage,
    faultsEndMs,
  };
}

function base(s: Draws, index: number, kind: PlanKind, prefix: string, profile: Profile): SessionPlan {
  return {
    index,
    kind,
    reference: `${prefix}-${index}-${kind.replace('_', '')}`,
    atMs: 0,
    api: s.int('api', 0, profile.apis - 1),
    amount: s.int('amount', 100, 20_000) * 10,
    webhooks: kind === 'token' || !s.chance('webhooks-off', 0.25),
    approval: 'auto',
    finalization: 'auto',
    decisionDeadlineMs: s.int(
      'decision-deadline',
      profile.decisionDeadlineMs[0],
      profile.decisionDeadlineMs[1],
    ),
    customer: 'ok',
    refunds: [],
    decisions: [],
  };
}

/** The kind's own choices: card, payer, policies, decisions, refunds. */
/** `first`: the first session of its kind takes its fullest variant (a renewed QR, two refunds). */
function shape(
  p: SessionPlan,
  s: Draws,
  profile: Profile,
  combo: readonly [Approval, Finalization] | undefined,
  first: boolean,
): void {
  const customer = (): Customer => s.weighted('customer', { ok: 18, thief: 1, loser: 1 });
  switch (p.kind) {
    case 'card':
      [p.approval, p.finalization] = combo!;
      p.card = s.chance('declined', 0.05) ? 'declined' : 'frictionless';
      p.customer = customer();
      break;
    case 'three_ds':
      p.card = 'three_ds';
      p.approval = s.pick('approval', ['auto', 'manual'] as const);
      p.finalization = s.pick('finalization', ['auto', 'manual'] as const);
      p.payer = s.weighted('payer', { pass: 14, fail: 3, abandon: 3 });
      p.payerDelayMs = s.int('payer-delay', 0, 15_000);
      break;
    case 'hold_partial':
      p.card = 'frictionless';
      p.approval = s.pick('approval', ['auto', 'manual'] as const);
      p.finalization = s.chance('manual', 0.7) ? 'manual' : 'auto_partial';
      break;
    case 'fps':
      p.approval = s.pick('approval', ['auto', 'manual'] as const);
      p.qrRenewals = s.int('renewals', 1, 2);
      p.payer = first ? 'pay_renewed' : s.weighted('payer', { pay_first: 3, pay_renewed: 5, never: 2 });
      p.payerDelayMs = s.int('payer-delay', 0, 8_000);
      break;
    case 'payout':
      // The first payout of every run is a batch: several payouts in one session, through the faults.
      p.payout = first ? 'batch' : s.weighted('payout-to', { card: 3, token: 2, batch: 1 });
      if (p.payout === 'batch') p.batch = s.int('batch', 2, 3);
      p.approval = s.pick('approval', ['auto', 'manual'] as const);
      p.customer = s.chance('loser', 0.1) ? 'loser' : 'ok';
      break;
    case 'refund': {
      p.card = 'frictionless';
      const shape = first
        ? 'part_then_rest'
        : s.weighted('refunds', { part: 2, part_then_rest: 3, rest: 1, two_at_once: 2 });
      const part = Math.max(10, Math.round((p.amount * s.int('part', 10, 60)) / 100));
      if (shape === 'part') p.refunds = [{ amount: part, afterMs: s.int('r1', 0, 10_000) }];
      else if (shape === 'rest') p.refunds = [{ afterMs: s.int('r1', 0, 10_000) }];
      else
        p.refunds = [{ amount: part, afterMs: s.int('r1', 0, 10_000) }, { afterMs: s.int('r2', 0, 10_000) }];
      p.concurrentRefunds = shape === 'two_at_once';
      break;
    }
    case 'recurring':
      p.approval = s.pick('approval', ['auto', 'manual'] as const);
      break;
    case 'token':
      return;
  }
  if (p.finalization === 'auto_partial')
    p.partialAmount = Math.max(10, Math.round((p.amount * s.int('partial', 20, 90)) / 100));
  p.decisions = decisions(p, s, profile);
  if (s.chance('repeat', 0.2)) p.repeatAfterMs = s.int('repeat-after', 500, 30_000);
}

/** The partner's decisions: what a manual policy asks for, and stray ones in every policy. */
function decisions(p: SessionPlan, s: Draws, profile: Profile): DecisionPlan[] {
  const out: DecisionPlan[] = [];
  const moment = (name: string) =>
    (s.chance(`${name}-moment`, 0.6) ? 'asked' : 'anytime') as DecisionPlan['moment'];
  const after = (name: string, max: number) => s.int(`${name}-after`, 0, max);
  // Payouts and FPS payments have no finalization; refunds need the payment to succeed.
  const finalizes = p.kind !== 'payout' && p.kind !== 'fps';
  if (p.approval === 'manual') {
    const kind = s.chance('approve', 0.8) ? 'approve' : 'cancel';
    out.push({ kind, moment: moment('approval'), afterMs: after('approval', 20_000) });
    if (s.chance('approval-race', 0.15))
      out.push({
        kind: kind === 'approve' ? 'cancel' : 'approve',
        moment: 'asked',
        afterMs: after('race', 1_500),
      });
  }
  if (finalizes && p.finalization === 'manual') {
    const kind = s.weighted('finalization', { partial: 5, whole: 2, cancel: 2, none: 1 });
    if (kind !== 'none')
      out.push({
        kind: kind === 'cancel' ? 'cancel' : 'finalize',
        moment: moment('finalization'),
        afterMs: after('finalization', 20_000),
        ...(kind === 'partial'
          ? { amount: Math.max(10, Math.round((p.amount * s.int('finalize-part', 10, 95)) / 100)) }
          : {}),
      });
  }
  // A decision the policy does not take, or at a moment nothing waits for it: refused, never acted on.
  if (s.chance('stray', profile.name === 'full' ? 0.2 : 0.3)) {
    const kind = s.pick(
      'stray-kind',
      finalizes ? (['approve', 'cancel', 'finalize'] as const) : (['approve', 'cancel'] as const),
    );
    out.push({ kind, moment: 'anytime', afterMs: after('stray', 30_000) });
  }
  return out;
}

function faultRules(family: FaultFamily, f: Draws, profile: Profile, first: boolean): FaultRuleInput[] {
  switch (family) {
    case 'provider_5xx':
      // The first window is the whole provider down; later ones may hit part of it or part of the calls.
      return [
        {
          kind: 'error_5xx',
          status: f.pick('status', [500, 502, 503] as const),
          ...(first
            ? {}
            : { path: f.pick('path', ['transaction/*', 'transaction/state', 'transaction/start/*']) }),
          rate: first ? 1 : f.pick('rate', [1, 0.75]),
        },
      ];
    case 'provider_timeout':
      return [
        {
          kind: 'latency',
          ms: profile.timeoutLatencyMs,
          ...(first ? {} : { path: f.pick('path', ['transaction/*', 'transaction/state']) }),
          rate: first ? 1 : f.pick('rate', [1, 0.5]),
        },
      ];
    case 'commit_drop':
      return MONEY_MOVING_ENDPOINTS.map((path) => ({
        kind: 'drop_after_commit' as const,
        path,
        rate: first ? 0.5 : f.pick(`rate-${path}`, [0.5, 1, 0.34]),
      }));
    case 'webhook_drop':
      return [{ kind: 'webhook_drop', rate: 0.5 }];
    case 'webhook_duplicate':
      return [{ kind: 'webhook_duplicate', rate: 0.5 }];
    case 'webhook_reorder':
      return [{ kind: 'webhook_reorder', rate: 0.5, maxHoldMs: 20_000 }];
    case 'webhook_delay':
      return [{ kind: 'webhook_delay', rate: 0.5, ms: f.int('ms', 20_000, 90_000) }];
    case 'webhooks_off':
      return [{ kind: 'webhook_drop', rate: 1 }];
  }
}
