/**
 * paysaga on a real Temporal cluster (`npm run test:cluster`): `temporal-server` built from source on
 * PostgreSQL, paysaga registered on it, a sandbox, two `paysaga worker` and two `paysaga api` processes
 * on one task queue (test/cluster/cluster-stack.ts). Every session kind of `paysaga demo` runs through
 * both APIs (each request to the next API in turn) while one worker is SIGKILLed midway; then every
 * session is final as expected, both APIs show the same, paysaga's store (a database of its own on the
 * same PostgreSQL server) holds each session as final as the provider shows it, Temporal's visibility
 * (PostgreSQL) finds each session by its search attributes, and the sandbox ledger shows each money
 * movement once.
 *
 * paysaga is registered by `paysaga setup` (which also migrates the store), run again to show it
 * changes nothing. The 3-D Secure payer
 * returns through the signed back_url to the public listener of the API that did not start the session.
 *
 * PAYSAGA_CLUSTER_ADDRESS (and PAYSAGA_CLUSTER_NAMESPACE) run the same against another cluster.
 */
import { PaysagaApiClient, type Session, type Subscription } from '../../client/http';
import { DEMO_KINDS, runDemo, type DemoKind } from '../../cli/dev/demo';
import { alternatingDispatcher, type AlternatingDispatcher } from './alternating-dispatcher';
import { saveLogs, startCluster, startPaysaga, type Cluster, type Paysaga } from './cluster-stack';
import { Teardown } from './teardown';
import {
  closeTime,
  countWorkflows,
  registerPaysaga,
  searchAttributes,
  serverVersion,
} from './temporal-admin';
import type { PaysagaProcess } from './paysaga-process';
import { HISTORY_SHARDS } from './temporal-server';
import { searchAttributeSpecs } from '../../common/search-attributes';
import { openStore } from '../../store/database';

/** The kill happens once this many sessions exist (of the demo's 14 kinds), while they are in flight. */
const KILL_AFTER_CREATED = 6;
/** Per scenario; a session whose activity died with the worker waits out its 45 s startToCloseTimeout. */
const SCENARIO_TIMEOUT_MS = 240_000;
const FINAL = new Set(['succeeded', 'failed', 'canceled']);

/**
 * The sandbox ledger's movements each demo scenario's session makes, sorted (sandbox/ledger.ts). The
 * sandbox project holds card funds first (`hold: true`), as `paysaga dev`'s does.
 */
const MOVEMENTS: Record<Exclude<DemoKind, 'subscription'>, string[]> = {
  card: ['capture', 'hold'],
  'three-ds': ['capture', 'hold'],
  'payment-form': ['capture', 'hold'],
  recurring: ['capture', 'hold'],
  hold: ['capture', 'hold', 'release'], // finalized in part
  refund: ['capture', 'hold', 'refund'],
  chargeback: ['capture', 'chargeback', 'hold'],
  fps: ['charge'],
  'fps-widget': ['charge'],
  payout: ['payout'],
  payouts: ['payout', 'payout'], // one of three canceled
  'identity-check': [],
  'fps-binding': [], // binds an account, charges nothing
};

const log = (message: string) => process.stderr.write(`[cluster] ${message}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `probe()` until it gives something, every 500 ms, within `timeoutMs`. */
async function waitFor<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(500);
  }
}

interface LedgerEntry {
  sessionId: string;
  operationId: string;
  refundId?: string;
  kind: 'hold' | 'capture' | 'release' | 'charge' | 'payout' | 'refund' | 'chargeback';
  amount: number;
  currency: string;
}

describe('paysaga on a Temporal cluster (temporal-server on PostgreSQL, 2 workers, 2 APIs)', () => {
  const teardown = new Teardown();
  // Unset when beforeAll failed early (saveLogs and the teardown cope).
  let cluster: Cluster;
  let stack: Paysaga;
  let alternating: AlternatingDispatcher;
  /** One client per API, for reading the same session from each. */
  let direct: PaysagaApiClient[] = [];
  const finalViews = new Map<Exclude<DemoKind, 'subscription'>, Session>();
  let subscription: Subscription | undefined;
  let kill: { at: Date; touched: string[]; kindsInFlight: DemoKind[] } | undefined;

  beforeAll(async () => {
    const started = Date.now();
    // On a failure here afterAll still stops whatever was started.
    cluster = await startCluster(teardown);
    stack = await startPaysaga(cluster, teardown);
    alternating = alternatingDispatcher(stack.apiUrls);
    teardown.add('API clients', async () => {
      await Promise.all(direct.map((c) => c.close()));
      await alternating.close();
    });
    direct = stack.apiUrls.map((baseUrl) => new PaysagaApiClient({ baseUrl, token: stack.apiToken }));
    log(`stack up in ${Date.now() - started} ms: ${JSON.stringify(cluster.timings)}`);
  }, 600_000);

  afterAll(async () => {
    log(`logs: ${saveLogs(cluster, stack)}`);
    const problems = await teardown.run();
    if (problems.length) throw new Error(`teardown: ${problems.join('; ')}`);
  }, 180_000);

  it('paysaga setup registered paysaga on the cluster (temporal-server 1.32.0 from source); a second run changes nothing', async () => {
    // Registered once by the stack (on a fresh local cluster that registered the namespace and added
    // every attribute); again changes nothing and does not fail.
    if (cluster.local) expect(cluster.registration.changed).toBe(true);
    const before = await searchAttributes(cluster.target);
    const again = await registerPaysaga(cluster.target);
    expect(again.changed).toBe(false);
    const attributes = await searchAttributes(cluster.target);
    expect([...attributes].sort()).toEqual([...before].sort());
    for (const spec of searchAttributeSpecs()) {
      const [name, type] = spec.split('=') as [string, string];
      expect([name, attributes.get(name)]).toEqual([name, type]);
    }
    if (cluster.local) {
      expect(cluster.local.serverVersion).toMatch(/1\.32\.0/);
      expect(await serverVersion(cluster.target)).toBe('1.32.0');
      log(
        `${cluster.local.serverVersion}; ${cluster.local.sqlToolVersion}; ${HISTORY_SHARDS} history shards`,
      );
    }
  });

  it('every session kind ends as expected through both APIs while one of two workers is SIGKILLed', async () => {
    const started = Date.now();
    const seconds = () => ((Date.now() - started) / 1000).toFixed(1);
    /** Session id -> the last phase the demo reported for it, in order of creation. */
    const phases = new Map<string, string>();
    const done = new Set<DemoKind>();
    const api = new PaysagaApiClient({
      baseUrl: stack.apiUrls[0]!,
      token: stack.apiToken,
      dispatcher: alternating.dispatcher,
    });
    const demo = runDemo({
      api,
      sandboxUrl: stack.sandboxUrl,
      temporalUiUrl: 'http://temporal-ui.invalid',
      namespace: cluster.target.namespace,
      timeoutMs: SCENARIO_TIMEOUT_MS,
      progress: (kind, message) => {
        const m = /^(ps_\S+) (?:created: )?[a-z_]+: ([a-z_]+)/.exec(message);
        if (m) phases.set(m[1]!, m[2]!);
        if (/^(done|FAILED):/.test(message)) done.add(kind);
        log(`${seconds()}s ${kind}: ${message}`);
      },
    });

    // Midway: enough sessions exist and the doomed worker holds one that is not over yet. Its log names
    // each workflow it ran a task of; a session it started may not have been reported yet (the demo
    // reports a session once its create call answers), and such a session is not over either.
    const [victim, survivor] = stack.workers as [PaysagaProcess, PaysagaProcess];
    const touched = () => [...new Set(victim.output().match(/(?<="workflowId":")[^"]+/g) ?? [])];
    const inHand = () =>
      touched().some((id) => id.startsWith('ps_') && !FINAL.has(phases.get(id) ?? 'unreported'));
    const deadline = Date.now() + 60_000;
    while (
      (phases.size < KILL_AFTER_CREATED || !inHand()) &&
      done.size < DEMO_KINDS.length &&
      Date.now() < deadline
    )
      await sleep(20);
    victim.child.kill('SIGKILL');
    kill = { at: new Date(), touched: touched(), kindsInFlight: DEMO_KINDS.filter((k) => !done.has(k)) };
    log(
      `SIGKILL ${victim.name} (pid ${victim.pid}) at ${seconds()}s: ${phases.size} sessions created, ` +
        `${kill.kindsInFlight.length} kinds in flight, it had worked on ${kill.touched.join(', ')}`,
    );

    const results = await demo;
    log(`demo done in ${seconds()}s`);
    const failed = results.filter((r) => !r.ok).map((r) => `${r.kind}: ${r.outcome}`);
    expect(failed).toEqual([]);
    expect(results.map((r) => r.kind).sort()).toEqual([...DEMO_KINDS].sort());
    expect(survivor.running()).toBe(true);
    // The payer came back through the signed back_url to a page bound to the session (a token the
    // other API could not verify would show not_found).
    const threeDs = results.find((r) => r.kind === 'three-ds')!;
    expect(threeDs.outcome).toMatch(/return page: (success|processing)$/);

    // Both APIs served creating calls and reads.
    for (const [origin, sent] of alternating.sent) {
      const creates = [...sent].filter(([route]) => route.startsWith('POST ') && !route.includes('{id}'));
      const reads = sent.get('GET /v1/sessions/{id}') ?? 0;
      log(`${origin}: ${JSON.stringify(Object.fromEntries(sent))}`);
      expect([origin, creates.length > 0, reads > 0]).toEqual([origin, true, true]);
    }

    // Each API shows every session the same way, final.
    for (const r of results) {
      if (r.kind === 'subscription') {
        // A charge already under way when the demo canceled still finishes (workflows/subscription.ts);
        // the subscription's workflow ends after it.
        await waitFor(`the end of ${r.sessionId}`, 120_000, () => closeTime(cluster.target, r.sessionId!));
        const views = await Promise.all(direct.map((c) => c.subscriptions.get(r.sessionId!)));
        expect(views.map((v) => v.status)).toEqual(['canceled', 'canceled']);
        expect(views[0]!.charges.filter((c) => c.outcome === 'pending')).toEqual([]);
        expect(views[1]!.totals).toEqual(views[0]!.totals);
        subscription = views[0];
        continue;
      }
      const views = await Promise.all(direct.map((c) => c.sessions.get(r.sessionId!)));
      expect([r.kind, FINAL.has(views[0]!.phase), views[1]!.phase]).toEqual([r.kind, true, views[0]!.phase]);
      expect(views[1]!.operations).toEqual(views[0]!.operations);
      finalViews.set(r.kind, views[0]!);
    }
  }, 900_000);

  it('the SIGKILLed worker had sessions in hand, and the other worker finished them', async () => {
    const [victim, survivor] = stack.workers as [PaysagaProcess, PaysagaProcess];
    expect((await victim.exited).signal).toBe('SIGKILL');
    expect(kill?.kindsInFlight.length).toBeGreaterThan(0);
    // Sessions the victim had worked on that became final after it died: the survivor ran them. (A
    // session's workflow goes on following the provider after the result, so its close time says
    // nothing; a subscription's workflow closes when it ends.)
    const carried: string[] = [];
    for (const id of kill!.touched) {
      const ended = id.startsWith('ps_')
        ? await direct[0]!.sessions.get(id).then((v) => (v.finalAt ? new Date(v.finalAt) : undefined))
        : await closeTime(cluster.target, id);
      if (ended && ended > kill!.at) carried.push(id);
    }
    log(`carried over by ${survivor.name}: ${carried.join(', ')}`);
    expect(carried.length).toBeGreaterThan(0);
    for (const id of carried) expect([id, survivor.output().includes(id)]).toEqual([id, true]);
  });

  it("paysaga's store, on the cluster's PostgreSQL server, holds every session final as both APIs show it", async () => {
    expect(finalViews.size).toBe(DEMO_KINDS.length - 1);
    const store = openStore({ url: cluster.storeUrl, schema: 'paysaga', poolSize: 2 });
    try {
      const ids = [...finalViews.values()].map((v) => v.sessionId);
      const rows = await store.db
        .selectFrom('sessions')
        .select(['id', 'kind', 'reference', 'phase', 'final', 'version'])
        .where('id', 'in', ids)
        .execute();
      const byId = new Map(rows.map((r) => [r.id, r]));
      for (const [kind, view] of finalViews) {
        const row = byId.get(view.sessionId);
        expect([kind, row?.phase, row?.final, row?.reference]).toEqual([
          kind,
          view.phase,
          true,
          view.reference,
        ]);
        expect(row!.version).toBeGreaterThanOrEqual(view.version);
      }
      // The events of every session are in the store too, each once.
      const events = await store.db
        .selectFrom('events')
        .select(['id', 'subject'])
        .where('subject', 'in', ids)
        .execute();
      expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
      expect(new Set(events.map((e) => e.subject)).size).toBe(ids.length);
    } finally {
      await store.close();
    }
  });

  it("Temporal's visibility (PostgreSQL) finds each session by its search attributes, pinned to the workers' build", async () => {
    expect(finalViews.size).toBe(DEMO_KINDS.length - 1);
    for (const [kind, view] of finalViews) {
      // Every run of the session (payment, refund, late event) carries paysaga's attributes. A late-event
      // run may still be open: it waits a while for more events after the session's phase is final.
      const runs = `WorkflowId = '${view.sessionId}'`;
      const all = await countWorkflows(cluster.target, runs);
      const withAttributes = await countWorkflows(
        cluster.target,
        `${runs} AND PaymentKind IS NOT NULL AND PaymentStatus IS NOT NULL`,
      );
      expect([kind, all > 0, withAttributes]).toEqual([kind, true, all]);
      // Every run is pinned to the one build the workers run (Worker Deployment Versioning).
      const pinned = await countWorkflows(
        cluster.target,
        `${runs} AND TemporalWorkerDeploymentVersion = '${stack.version.deploymentName}:${stack.version.buildId}'`,
      );
      expect([kind, pinned]).toEqual([kind, all]);
      // An operator finds it by the partner's reference (a late-event view names none of its own).
      if (view.reference !== view.sessionId) {
        const byReference = await countWorkflows(
          cluster.target,
          `ClientReference = '${view.reference}' AND WorkflowId = '${view.sessionId}'`,
        );
        expect([kind, byReference]).toEqual([kind, 1]);
      }
    }
  });

  it('the sandbox ledger shows each money movement once, and what the sessions say moved', async () => {
    expect(finalViews.size).toBe(DEMO_KINDS.length - 1);
    expect(subscription?.charges.length).toBeGreaterThanOrEqual(2);
    const res = await fetch(`${stack.sandboxUrl}/sandbox/ledger?project_id=${stack.projectId}`);
    const { entries } = (await res.json()) as { entries: LedgerEntry[] };

    // No movement twice: one entry per operation (and refund) and kind.
    const seen = new Map<string, number>();
    for (const e of entries) {
      const key = `${e.sessionId} ${e.operationId} ${e.refundId ?? ''} ${e.kind}`;
      seen.set(key, (seen.get(key) ?? 0) + 1);
    }
    expect([...seen].filter(([, n]) => n > 1)).toEqual([]);

    // Per session, the movements its kind makes, each once; and nothing for any other session.
    const bySession = new Map<string, LedgerEntry[]>();
    for (const e of entries) bySession.set(e.sessionId, [...(bySession.get(e.sessionId) ?? []), e]);
    const expected = new Map<string, { kind: string; movements: string[]; view?: Session }>();
    for (const [kind, view] of finalViews)
      expected.set(view.sessionId, { kind, movements: MOVEMENTS[kind], view });
    for (const charge of subscription!.charges.filter((c) => c.outcome === 'succeeded'))
      expected.set(charge.sessionId, { kind: 'subscription charge', movements: ['capture', 'hold'] });
    for (const [sessionId, { kind, movements }] of expected) {
      const got = (bySession.get(sessionId) ?? []).map((e) => e.kind).sort();
      expect([kind, sessionId, got]).toEqual([kind, sessionId, movements]);
    }
    const unexpected = [...bySession].filter(([id]) => !expected.has(id));
    expect({ unexpected, charges: unexpected.length ? subscription!.charges : [] }).toEqual({
      unexpected: [],
      charges: [],
    });

    for (const [sessionId, { kind, view }] of expected) {
      const moved = bySession.get(sessionId) ?? [];
      const sum = (k: LedgerEntry['kind']) =>
        moved.filter((e) => e.kind === k).reduce((a, e) => a + e.amount, 0);
      // A hold ends charged, released, or in part each: never both in full, never left hanging.
      if (sum('hold') > 0) expect([kind, sum('capture') + sum('release')]).toEqual([kind, sum('hold')]);
      // What the session shows of each refund, chargeback, payout and one-step charge is what moved.
      for (const e of moved.filter((m) => ['refund', 'chargeback', 'payout', 'charge'].includes(m.kind))) {
        const op = view?.operations.find((o) => o.id === (e.refundId ?? e.operationId));
        expect([kind, e.kind, op?.amount]).toEqual([kind, e.kind, e.amount]);
      }
    }
    const charged = subscription!.charges
      .filter((c) => c.outcome === 'succeeded')
      .flatMap((c) => bySession.get(c.sessionId) ?? [])
      .filter((e) => e.kind === 'capture')
      .reduce((a, e) => a + e.amount, 0);
    expect(charged).toBe(subscription!.totals.chargedAmount);
  });
});
