/**
 * The reliability suite's plan (test/reliability/plan.ts): one seed, one plan; bounded; and every part the
 * suite promises is in the CI subset and the full run: each session kind, every policy, every fault family
 * lasting past the retry budgets, commit-then-drop on every money-moving endpoint, each disruption.
 */
import { faultRulesSchema } from '../../sandbox/faults';
import { reference } from '../../client/inputs';
import { FAULT_FAMILIES, MIX_KINDS, MONEY_MOVING_ENDPOINTS, makePlan } from '../reliability/plan';
import { PROFILES, profileFromEnv } from '../reliability/profiles';

/** Temporal's attempts of one provider call (1+2+4+8+16 s apart) and more: a fault must outlast them. */
const RETRY_BUDGET_MS = 31_000;

describe('the plan of a reliability run', () => {
  test('the same seed gives the same plan; another seed another one', () => {
    expect(makePlan(PROFILES.ci, 'abc')).toEqual(makePlan(PROFILES.ci, 'abc'));
    expect(makePlan(PROFILES.ci, 'abd').sessions).not.toEqual(makePlan(PROFILES.ci, 'abc').sessions);
  });

  test.each(['ci', 'full'] as const)(
    '%s: every kind, policy, fault and disruption is there, bounded',
    (name) => {
      const profile = PROFILES[name];
      for (const seed of ['1', 'x7', 'seed-3']) {
        const plan = makePlan(profile, seed);
        const mix = plan.sessions.filter((s) => s.kind !== 'token');
        expect(mix).toHaveLength(profile.sessions);
        expect(plan.sessions.filter((s) => s.kind === 'token')).toHaveLength(profile.tokenSessions);
        expect(new Set(mix.map((s) => s.kind))).toEqual(new Set(MIX_KINDS));
        const combos = new Set(
          mix.filter((s) => s.kind === 'card').map((s) => `${s.approval}/${s.finalization}`),
        );
        expect(combos).toEqual(
          new Set([
            'auto/auto',
            'manual/auto',
            'auto/manual',
            'manual/manual',
            'auto/auto_partial',
            'manual/auto_partial',
          ]),
        );
        // Decisions in every policy: what a manual one asks for, and stray ones the policy refuses.
        expect(mix.some((s) => s.approval === 'auto' && s.decisions.length > 0)).toBe(true);
        expect(mix.filter((s) => s.approval === 'manual').every((s) => s.decisions.length > 0)).toBe(true);
        expect(new Set(mix.flatMap((s) => s.decisions.map((d) => d.kind)))).toEqual(
          new Set(['approve', 'cancel', 'finalize']),
        );
        expect(mix.some((s) => s.kind === 'fps' && s.payer === 'pay_renewed' && s.qrRenewals! >= 1)).toBe(
          true,
        );
        expect(mix.some((s) => s.refunds.length > 1)).toBe(true);
        expect(plan.subscriptions.every((s) => s.periods >= 3)).toBe(true);

        for (const s of plan.sessions) {
          expect(reference.safeParse(s.reference).success).toBe(true);
          expect(s.atMs).toBeGreaterThanOrEqual(0);
          expect(s.atMs).toBeLessThanOrEqual(profile.createUntilMs);
        }
        expect(new Set(plan.sessions.map((s) => s.reference)).size).toBe(plan.sessions.length);

        expect(new Set(plan.faults.map((f) => f.family))).toEqual(new Set(FAULT_FAMILIES));
        for (const f of plan.faults) {
          expect(f.forMs).toBeGreaterThan(2 * RETRY_BUDGET_MS);
          expect(f.atMs).toBeGreaterThanOrEqual(profile.faultsFromMs);
          expect(f.atMs + f.forMs).toBeLessThanOrEqual(profile.faultsUntilMs);
          expect(faultRulesSchema.safeParse(f.rules).success).toBe(true);
          expect(f.rules.every((r) => r.forMs === f.forMs && r.label === f.id)).toBe(true);
        }
        // The first outage is the whole provider.
        const outage = plan.faults.find((f) => f.id === 'provider_5xx#1')!.rules;
        expect(outage).toEqual([expect.objectContaining({ kind: 'error_5xx', rate: 1 })]);
        expect('path' in outage[0]! ? outage[0].path : undefined).toBeUndefined();
        const dropped = plan.faults.flatMap((f) => f.rules.filter((r) => r.kind === 'drop_after_commit'));
        expect(new Set(dropped.map((r) => r.path))).toEqual(new Set(MONEY_MOVING_ENDPOINTS));

        // No other window opens inside a whole outage (where it would see little), unless it is the last
        // that fits in the range.
        const outages = plan.faults.filter((f) => /^provider_(5xx|timeout)#1$/.test(f.id));
        for (const f of plan.faults.filter((x) => !outages.includes(x)))
          if (outages.some((o) => f.atMs >= o.atMs && f.atMs < o.atMs + o.forMs))
            expect(f.atMs).toBe(profile.faultsUntilMs - f.forMs);

        const kinds = plan.disruptions.map((x) => x.what);
        expect(kinds.filter((k) => k === 'worker_kill')).toHaveLength(profile.workerKills);
        expect(kinds.filter((k) => k === 'api_restart')).toHaveLength(profile.apiRestarts);
        expect(kinds.filter((k) => k === 'temporal_restart')).toHaveLength(profile.temporalRestarts);
        expect(kinds.filter((k) => k === 'store_restart')).toHaveLength(profile.storeRestarts);
        // The store's outage: under load (while sessions are created), and no crash inside it.
        if (profile.storeOutageMs > 0) {
          const o = plan.storeOutage!;
          expect(o.forMs).toBe(profile.storeOutageMs);
          expect(o.atMs).toBeGreaterThanOrEqual(profile.faultsFromMs);
          expect(o.atMs).toBeLessThan(profile.createUntilMs);
          for (const x of plan.disruptions.filter((x) => x.what === 'store_restart'))
            expect(x.atMs < o.atMs || x.atMs >= o.atMs + o.forMs).toBe(true);
          expect(plan.faultsEndMs).toBeGreaterThanOrEqual(o.atMs + o.forMs);
        }
        for (let i = 1; i < plan.disruptions.length; i++)
          expect(plan.disruptions[i]!.atMs - plan.disruptions[i - 1]!.atMs).toBeGreaterThanOrEqual(20_000);
      }
    },
  );

  test('the profile comes from RELIABILITY_PROFILE (full by default); an unknown one is refused by name', () => {
    expect(profileFromEnv({}).name).toBe('full');
    expect(profileFromEnv({ RELIABILITY_PROFILE: 'ci' }).name).toBe('ci');
    expect(() => profileFromEnv({ RELIABILITY_PROFILE: 'huge' })).toThrow(
      new Error('RELIABILITY_PROFILE must be one of full, ci, tiny, got "huge"'),
    );
    expect(PROFILES.full.sessions).toBeGreaterThanOrEqual(200);
  });
});
