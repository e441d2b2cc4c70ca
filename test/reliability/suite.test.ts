/**
 * The reliability suite (`npm run test:reliability`; docs/reliability.md): mixed sessions created
 * through the API while faults run for minutes (the provider answering 5xx or timing out past every
 * retry budget, commit-then-drop on every money-moving endpoint, webhooks dropped, duplicated,
 * reordered, delayed and switched off, partner decisions at random moments in every policy, workers
 * SIGKILLed, APIs and the Temporal server restarted), then the verdict against the provider's truth
 * (test/reliability/verdict.ts) and the tables. The plan comes from a seed (printed; RELIABILITY_SEED
 * repeats it) and a profile (RELIABILITY_PROFILE: full, ci, tiny).
 *
 * The second test plants a double charge behind paysaga's back and shows that the verdict fails naming it.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PaysagaApiClient, type Session } from '../../client/http';
import { Teardown } from '../cluster/teardown';
import { runChaos, type ChaosLog } from './chaos';
import { newSeed } from './draws';
import { newJournal } from './journal';
import { Partner } from './partner';
import { makePlan } from './plan';
import { chargeOrderAgain } from './plant';
import { profileFromEnv } from './profiles';
import { fullReport } from './report';
import { PROJECT_ID, runFolder, startStack, type Stack } from './stack';
import {
  collectEvidence,
  evidenceOf,
  inBatches,
  isUnreadable,
  knownSessionIds,
  type Evidence,
  type TruthSources,
} from './truth';
import { judge, type Violation } from './verdict';
import { Client, Connection } from '@temporalio/client';
import { codecFromEnv } from '../../platform/codec';
import { Operator, replayAll, type Replayed } from '../helpers/operator';

const profile = profileFromEnv();
const seed = process.env.RELIABILITY_SEED || newSeed();
const plan = makePlan(profile, seed);
const OUT = path.resolve(__dirname, '../../test-results/reliability');

const log = (message: string) => process.stderr.write(`[reliability] ${message}\n`);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, ms)));

/** The whole run's bound: the plan, the partner's patience, the settling, the reading. */
const RUN_BOUND_MS =
  Math.max(plan.faultsEndMs, profile.createUntilMs) +
  profile.partnerPatienceMs +
  profile.settleMs +
  5 * 60_000;

describe(`reliability suite (${profile.name}, seed ${seed})`, () => {
  const teardown = new Teardown();
  let stack: Stack | undefined;
  let apis: PaysagaApiClient[] = [];
  let sources: TruthSources;
  let evidence: Evidence | undefined;
  let violations: Violation[] = [];

  beforeAll(async () => {
    log(`profile ${profile.name}, seed ${seed} (RELIABILITY_SEED=${seed} repeats this run)`);
    log(
      `${plan.sessions.length} sessions, ${plan.subscriptions.length} subscriptions, ${plan.faults.length} fault windows, ` +
        `${plan.disruptions.length} disruptions; faults until ${Math.round(plan.faultsEndMs / 1000)} s`,
    );
    const started = Date.now();
    stack = await startStack(
      {
        workers: profile.workers,
        apis: profile.apis,
        providerTimeoutMs: profile.providerTimeoutMs,
        sandbox: profile.sandbox,
        reconcileEveryMs: profile.reconcileEveryMs,
        dir: runFolder(teardown),
        logsDir: path.join(OUT, 'logs'),
      },
      teardown,
    );
    apis = stack.apiUrls.map(
      (baseUrl) => new PaysagaApiClient({ baseUrl, token: stack!.apiToken, maxRetries: 0 }),
    );
    teardown.add('API clients', () => Promise.all(apis.map((a) => a.close())).then(() => undefined));
    sources = {
      api: new PaysagaApiClient({ baseUrl: stack.apiUrls[0]!, token: stack.apiToken, maxRetries: 4 }),
      sandboxUrl: stack.sandboxUrl,
      projectId: PROJECT_ID,
      partnerPrivateKey: stack.keys.partner.privatePem,
      temporalAddress: stack.temporalAddress,
      namespace: stack.namespace,
      taskQueue: stack.taskQueue,
      codecKeys: stack.codecKeys,
      storeUrl: stack.storeUrl,
    };
    teardown.add('truth client', () => sources.api.close());
    log(`stack up in ${Date.now() - started} ms: ${profile.workers} workers, ${profile.apis} APIs`);
  }, 600_000);

  afterAll(async () => {
    stack?.saveLogs();
    const problems = await teardown.run();
    if (problems.length) throw new Error(`teardown: ${problems.join('; ')}`);
  }, 240_000);

  it(
    'every session ends final and equal to the provider, nothing moved twice, nothing held, no workflow stuck',
    async () => {
      const s = stack!;
      const journal = newJournal(plan.sessions, plan.subscriptions);
      const startedAt = Date.now();
      const partner = new Partner({ profile, apis, journal, startedAt, log });
      const since = () => `${Math.round((Date.now() - startedAt) / 1000)}s`;

      const progress = setInterval(() => {
        const created = journal.sessions.filter((r) => r.created).length;
        log(`${since()}: ${created}/${plan.sessions.length} sessions created`);
      }, 30_000);
      // An operator looks at the running workflows all along, as the Temporal UI does (its queries fail
      // while the Temporal server is down: that is no failure of looking).
      const dataConverter = { payloadCodecs: [codecFromEnv({ PAYSAGA_CODEC_KEYS: s.codecKeys })!] };
      const connection = await Connection.connect({ address: s.temporalAddress });
      teardown.add('operator connection', () => connection.close());
      const client = new Client({ connection, namespace: s.namespace, dataConverter });
      const filter = `TaskQueue="${s.taskQueue}"`;
      const operator = new Operator(client, filter);
      operator.start(2);
      let chaos: ChaosLog;
      try {
        const partnerDone = Promise.all([
          ...journal.sessions.map((r) => partner.session(r)),
          ...journal.subscriptions.map((r) => partner.subscription(r)),
        ]);
        chaos = await runChaos(plan, s, startedAt, (m) => log(`${since()}: ${m}`));
        let timer: NodeJS.Timeout | undefined;
        const bound = new Promise<string>(
          (r) => (timer = setTimeout(() => r('timed out'), profile.partnerPatienceMs)),
        );
        if ((await Promise.race([partnerDone.then(() => 'done'), bound])) !== 'done')
          log(`${since()}: the partner's scripted calls did not all end in time; settling anyway`);
        clearTimeout(timer);
      } finally {
        clearInterval(progress);
      }
      log(
        `${since()}: the faults are over and the partner is done; settling (at most ${profile.settleMs / 1000} s)`,
      );

      // The roll call: every create sent once more names the session it named before (or, for a create
      // whose answers were all lost, the session paysaga made for it). Before settling, so that settling
      // also waits for the sessions the partner never heard of: nobody decides for them, and they end
      // by their own deadlines.
      await inBatches(journal.sessions, 4, async (r) => {
        if (r.note?.startsWith('no recurring token')) return;
        const token =
          r.plan.kind === 'recurring' || r.plan.payout === 'token'
            ? await partner.tokens.pick(r.plan.index)
            : undefined;
        await partner.rollCall(r, token);
      });

      // Settle: everything final (refunds too) and every subscription ended, within settleMs.
      const settleUntil = Date.now() + profile.settleMs;
      let open: string[] = [];
      for (;;) {
        open = [];
        const subs = await Promise.all(
          journal.subscriptions
            .filter((r) => r.subscriptionId)
            .map((r) => sources.api.subscriptions.get(r.subscriptionId!).catch(() => undefined)),
        );
        for (const sub of subs) {
          if (!sub || sub.status !== 'canceled' || sub.charges.some((c) => c.outcome === 'pending'))
            open.push(sub?.subscriptionId ?? 'a subscription');
        }
        const ids = new Set(journal.sessions.flatMap((r) => r.sessionIds));
        for (const sub of subs) for (const c of sub?.charges ?? []) ids.add(c.sessionId);
        await inBatches([...ids], 8, async (id) => {
          const v: Session | undefined = await sources.api.sessions.get(id).catch(() => undefined);
          if (!v?.final || v.refunds.some((r) => r.status !== 'succeeded' && r.status !== 'failed'))
            open.push(id);
        });
        if (open.length === 0 || Date.now() > settleUntil || s.unexpectedExits().length > 0) break;
        log(
          `${since()}: ${open.length} not final yet (${open.slice(0, 5).join(', ')}${open.length > 5 ? ', ...' : ''})`,
        );
        await sleep(10_000);
      }
      log(`${since()}: settled${open.length ? ` with ${open.length} not final` : ''}`);
      const looked = await operator.stop();
      log(
        `${since()}: the operator looked ${looked.looks} times (${looked.queries} queries, ` +
          `${looked.stackTracesWithFrames}/${looked.stackTraces} stack traces naming paysaga's code, ` +
          `${looked.askedAgain} answered "ask again")`,
      );
      // A worker or API that died by itself is the defect to read first (its lines were logged as it died);
      // the verdict would only read what it left behind.
      expect(s.unexpectedExits()).toEqual([]);

      evidence = await collectEvidence(plan, journal, chaos!, sources);
      // Every history of the run replays against the workers' bundle, as after a restart or an eviction.
      const replayed: Replayed = await replayAll(client, filter, s.bundlePath, dataConverter);
      log(
        `${since()}: ${replayed.histories} histories replayed: ${replayed.failures.length} failed, ` +
          `${replayed.failedTasks.length} workflow tasks failed while running`,
      );
      violations = [
        ...judge(evidence),
        ...replayed.failures.map((f) => ({
          rule: 'unreplayable' as const,
          subject: f.workflowId,
          detail: `run ${f.runId}: ${f.error}`,
        })),
        ...replayed.failedTasks.map((f) => ({
          rule: 'workflow_task_failed' as const,
          subject: f.workflowId,
          detail: `run ${f.runId}: ${f.cause}`,
        })),
      ];
      const header = [
        `reliability run: profile ${profile.name}, seed ${seed}, ${Math.round((Date.now() - startedAt) / 1000)} s ` +
          `(faults until ${Math.round(plan.faultsEndMs / 1000)} s)`,
        `machine: ${os.cpus().length} cores (nproc), ${Math.round(os.totalmem() / 2 ** 30)} GiB memory, ` +
          `load ${os
            .loadavg()
            .map((l) => l.toFixed(1))
            .join(' ')}, node ${process.version}`,
        `sessions known: ${knownSessionIds(journal, evidence.subscriptions).length}, ledger entries: ${evidence.ledger.length}, ` +
          `workflows: ${Object.entries(evidence.workflows.counts)
            .map(([k, n]) => `${k} ${n}`)
            .join(', ')}`,
      ];
      const report = fullReport(evidence, violations, header);
      fs.mkdirSync(OUT, { recursive: true });
      fs.writeFileSync(
        path.join(OUT, `report-${profile.name}.txt`),
        `${report.join('\n')}\n\nall violations:\n${violations.map((x) => `[${x.rule}] ${x.subject}: ${x.detail}`).join('\n')}\n`,
      );
      fs.writeFileSync(
        path.join(OUT, `journal-${profile.name}.json`),
        JSON.stringify(
          {
            seed,
            profile: profile.name,
            plan,
            sessions: journal.sessions,
            subscriptions: journal.subscriptions,
            chaos,
            violations,
          },
          null,
          1,
        ),
      );
      if (violations.length > 0) {
        const file = path.join(OUT, `evidence-${profile.name}.json`);
        fs.writeFileSync(file, JSON.stringify(evidenceOf(evidence, violations), null, 1));
        log(`what paysaga, its store and the provider show of each subject of a violation: ${file}`);
      }
      process.stderr.write(`\n${report.join('\n')}\n\n`);
      expect(violations).toEqual([]);
    },
    RUN_BOUND_MS,
  );

  it('a planted double charge (an order charged again outside paysaga) makes the verdict fail, naming it', async () => {
    expect(evidence).toBeDefined();
    const ev = evidence!;
    // A card checkout that succeeded: its order is charged a second time at the provider.
    const paid = ev.journal.sessions.find((r) => {
      const v = r.sessionIds[0] ? ev.views.get(r.sessionIds[0]) : undefined;
      return (
        r.plan.kind !== 'payout' && r.plan.kind !== 'fps' && v && !isUnreadable(v) && v.phase === 'succeeded'
      );
    });
    expect(paid).toBeDefined();
    const order = paid!.plan.reference;
    const planted = await chargeOrderAgain({
      sandboxUrl: sources.sandboxUrl,
      projectId: PROJECT_ID,
      partnerPrivateKey: sources.partnerPrivateKey,
      order,
      amount: paid!.plan.amount,
    });
    log(`planted: order ${order} charged again in ${planted}, outside paysaga`);
    const again = judge(await collectEvidence(ev.plan, ev.journal, ev.chaos, sources));
    const named = again.filter((x) => x.rule === 'double_movement' && x.subject === order);
    log(`the verdict now: ${named.map((x) => x.detail).join('; ')}`);
    expect(named).toEqual([expect.objectContaining({ detail: expect.stringContaining(planted) })]);
    // Only the plant is new: everything the run itself left is judged as before.
    const before = new Set(violations.map((x) => `${x.rule} ${x.subject} ${x.detail}`));
    expect(again.filter((x) => !before.has(`${x.rule} ${x.subject} ${x.detail}`))).toEqual(named);
  }, 180_000);
});
