/**
 * paysaga on a real Temporal cluster (`npm run test:cluster`): `temporal-server` built from source on
 * PostgreSQL, paysaga registered on it, a sandbox, two `paysaga worker` and two `paysaga api` processes
 * on one task queue (test/cluster/cluster-stack.ts). Every session kind of `paysaga demo` runs through
 * both APIs (each request to the next API in turn) while one worker is SIGKILLed midway; then every
 * session is final as expected, both APIs show the same, Temporal's visibility (PostgreSQL) finds each
 * session by its search attributes, and the sandbox ledger shows each money movement once.
 *
 * PAYSAGA_CLUSTER_ADDRESS (and PAYSAGA_CLUSTER_NAMESPACE) run the same against another cluster.
 */
import { PaysagaApiClient, type Session, type Subscription } from '../../client/http';
import { DEMO_KINDS, runDemo, type DemoKind, type DemoResult } from '../../cli/dev/demo';
import { alternatingDispatcher, type AlternatingDispatcher } from './alternating-dispatcher';
import { startCluster, startPaysaga, type Cluster, type Paysaga } from './cluster-stack';
import { Teardown } from './teardown';
import { countWorkflows, searchAttributes, serverVersion } from './temporal-admin';
import { HISTORY_SHARDS } from './temporal-server';
import { searchAttributeSpecs } from '../../common/search-attributes';

/** The kill happens once this many sessions exist (of the demo's 12 kinds), while they are in flight. */
const KILL_AFTER_CREATED = 6;
/** Per scenario; a session whose activity died with the worker waits out its 45 s startToCloseTimeout. */
const SCENARIO_TIMEOUT_MS = 240_000;
const FINAL = new Set(['succeeded', 'failed', 'canceled']);

const log = (message: string) => process.stderr.write(`[cluster] ${message}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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
  let cluster: Cluster;
  let stack: Paysaga;
  let alternating: AlternatingDispatcher;
  /** One client per API, for reading the same session from each. */
  let direct: PaysagaApiClient[] = [];
  let results: DemoResult[] | undefined;
  const finalViews = new Map<DemoKind, Session>();
  let subscription: Subscription | undefined;

  beforeAll(async () => {
    const started = Date.now();
    try {
      cluster = await startCluster(teardown);
      stack = await startPaysaga(cluster, teardown);
    } catch (err) {
      // afterAll still runs; say what was up so far
      log(`start failed after ${Date.now() - started} ms`);
      throw err;
    }
    alternating = alternatingDispatcher(stack.apiUrls);
    teardown.add('API clients', async () => {
      await Promise.all(direct.map((c) => c.close()));
      await alternating.close();
    });
    direct = stack.apiUrls.map((baseUrl) => new PaysagaApiClient({ baseUrl, token: stack.apiToken }));
    log(`stack up in ${Date.now() - started} ms: ${JSON.stringify(cluster.timings)}`);
  }, 600_000);

  afterAll(async () => {
    const problems = await teardown.run();
    if (problems.length) throw new Error(`teardown: ${problems.join('; ')}`);
  }, 180_000);

  it('runs on temporal-server built from source, with paysaga registered in its namespace', async () => {
    const attributes = await searchAttributes(cluster.target);
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
    const created: string[] = [];
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
        const id = /^(ps_\S+) created:/.exec(message)?.[1];
        if (id) created.push(id);
        if (/^(done|FAILED):/.test(message)) done.add(kind);
        log(`${((Date.now() - started) / 1000).toFixed(1)}s ${kind}: ${message}`);
      },
    });

    // Midway: enough sessions exist, the doomed worker has worked on some of them, none is over.
    const [victim, survivor] = stack.workers as [Paysaga['workers'][0], Paysaga['workers'][0]];
    const deadline = Date.now() + 60_000;
    const touched = () => created.filter((id) => victim.output().includes(id));
    while (
      (created.length < KILL_AFTER_CREATED || touched().length === 0) &&
      done.size < DEMO_KINDS.length &&
      Date.now() < deadline
    )
      await sleep(50);
    const inFlightKinds = DEMO_KINDS.filter((k) => !done.has(k));
    const inFlightAtKill = touched();
    victim.child.kill('SIGKILL');
    log(
      `SIGKILL ${victim.name} (pid ${victim.pid}) at ${((Date.now() - started) / 1000).toFixed(1)}s: ` +
        `${created.length} sessions created, ${inFlightKinds.length} kinds in flight, ` +
        `${inFlightAtKill.length} sessions it had worked on`,
    );

    results = await demo;
    const exit = await victim.exited;
    log(`demo done in ${((Date.now() - started) / 1000).toFixed(1)}s`);

    const failed = results.filter((r) => !r.ok).map((r) => `${r.kind}: ${r.outcome}`);
    expect(failed).toEqual([]);
    expect(results.map((r) => r.kind).sort()).toEqual([...DEMO_KINDS].sort());

    // The kill was real and midway, and the other worker carried those sessions to their end.
    expect(exit.signal).toBe('SIGKILL');
    expect(survivor.running()).toBe(true);
    expect(inFlightKinds.length).toBeGreaterThan(0);
    expect(inFlightAtKill.length).toBeGreaterThan(0);
    for (const id of inFlightAtKill) expect([id, survivor.output().includes(id)]).toEqual([id, true]);

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
        const views = await Promise.all(direct.map((c) => c.subscriptions.get(r.sessionId!)));
        expect(views.map((v) => v.status)).toEqual(['canceled', 'canceled']);
        expect(views[1]!.totals).toEqual(views[0]!.totals);
        subscription = views[0];
        continue;
      }
      const views = await Promise.all(direct.map((c) => c.sessions.get(r.sessionId!)));
      expect([r.kind, views[0]!.phase, views[1]!.phase]).toEqual([r.kind, views[0]!.phase, views[0]!.phase]);
      expect([r.kind, FINAL.has(views[0]!.phase)]).toEqual([r.kind, true]);
      expect(views[1]!.operations).toEqual(views[0]!.operations);
      finalViews.set(r.kind, views[0]!);
    }
  }, 900_000);

  it("Temporal's visibility on PostgreSQL finds each session by its search attributes", async () => {
    expect(finalViews.size).toBeGreaterThan(0);
    for (const [kind, view] of finalViews) {
      const query = `WorkflowId = '${view.sessionId}' AND ClientReference = '${view.reference}'`;
      expect([kind, (await countWorkflows(cluster.target, query)) > 0]).toEqual([kind, true]);
    }
  });

  it('the sandbox ledger shows each money movement once', async () => {
    expect(finalViews.size).toBeGreaterThan(0);
    const res = await fetch(`${stack.sandboxUrl}/sandbox/ledger?project_id=${stack.projectId}`);
    const { entries } = (await res.json()) as { entries: LedgerEntry[] };
    log(`ledger: ${JSON.stringify(entries)}`);

    const seen = new Map<string, number>();
    for (const e of entries) {
      const key = `${e.sessionId} ${e.operationId} ${e.refundId ?? ''} ${e.kind}`;
      seen.set(key, (seen.get(key) ?? 0) + 1);
    }
    expect([...seen].filter(([, n]) => n > 1)).toEqual([]);
    void subscription;
  });
});
