/**
 * Recurring billing on Temporal's time-skipping test server: the real subscription workflow, with an
 * `openCharge` activity that opens each charge as a stand-in session (test/fixtures/billing-workflows.ts)
 * whose result the test decides (`plan`), so months and years pass in moments. What the workflow records is kept as a store would keep
 * it (the newest row, every event once), and every run of a subscription's chain can be replayed.
 *
 *   const b = await billingEnv();                 // afterEach: await b.close()
 *   b.plan = (reference, amount) => ({ takesMs: 60_000, phase: 'succeeded' });
 *   const { handle } = await b.subscribe({ schedule: {...}, endAfterPeriods: 3 });
 *   await b.skipTo('2027-02-01T00:00:00Z');       // the server's clock runs there, timers fire
 */
import * as path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import type { ChargeOpening } from '../../activities/types';
import type { temporal } from '@temporalio/proto';
import type { PaysagaEvent } from '../../common/events';
import type { SubscriptionView } from '../../common/views';
import type { SubscriptionRecord } from '../../store/subscriptions';
import type { ChargePlan } from '../fixtures/billing-workflows';
import { subscriptionInput, type TestSubscription } from './subscription-input';
import { startTimeSkipping } from './time-skipping';

const FIXTURE = path.resolve(__dirname, '..', 'fixtures', 'billing-workflows.ts');
let bundle: Promise<string> | undefined;
/** The fixture's bundle, built once per test file. */
export const billingBundle = (): Promise<string> =>
  (bundle ??= bundleWorkflowCode({ workflowsPath: FIXTURE, logger: undefined }).then((b) => b.code));

export interface BillingEnv {
  env: TestWorkflowEnvironment;
  /** How each charge goes (default: succeeds after a minute). */
  plan: (reference: string, amount: number) => ChargePlan;
  /** Every charge the stand-in was asked about, in order: its reference, amount, token and server time. */
  asked: { reference: string; amount: number; token: string; at: number }[];
  /** Events as the store would hold them: each once, by subscription. */
  events: Map<string, PaysagaEvent[]>;
  /** The newest record of each subscription. */
  rows: Map<string, { version: number; view: SubscriptionView }>;
  subscribe(
    t: Omit<TestSubscription, 'reference'> & { reference?: string },
  ): Promise<{ handle: WorkflowHandleWithFirstExecutionRunId; reference: string }>;
  skipTo(iso: string): Promise<void>;
  now(): Promise<number>;
  /** Every run of a subscription's chain, first to last, with its history. */
  runs(
    handle: WorkflowHandleWithFirstExecutionRunId,
  ): Promise<{ runId: string; history: temporal.api.history.v1.IHistory }[]>;
  /** Replays every run of the chain against the bundle; the failures. */
  replay(handle: WorkflowHandleWithFirstExecutionRunId): Promise<string[]>;
  close(): Promise<void>;
}

export async function billingEnv(): Promise<BillingEnv> {
  const code = await billingBundle();
  const env = await startTimeSkipping();
  const taskQueue = `billing-${randomUUID()}`;
  const b: BillingEnv = {
    env,
    plan: () => ({ takesMs: 60_000, phase: 'succeeded' }),
    asked: [],
    events: new Map(),
    rows: new Map(),
  } as unknown as BillingEnv;
  /** Each charge the subscription opened, by reference: asked again, the same session. */
  const opened = new Map<
    string,
    { sessionId: string; plan: ChargePlan; opensAt: number; started: boolean }
  >();
  const activities = {
    openCharge: async (c: ChargeOpening): Promise<{ sessionId: string }> => {
      const now = await env.currentTimeMs();
      let charge = opened.get(c.reference);
      if (!charge) {
        const info = c.body.payment_info as { recurring_token_info?: { token?: string } } | undefined;
        const token = info?.recurring_token_info?.token ?? '';
        b.asked.push({ reference: c.reference, amount: c.money.amount, token, at: now });
        const plan = b.plan(c.reference, c.money.amount);
        charge = {
          sessionId: `ps_${c.reference}`,
          plan,
          opensAt: now + (plan.opensAfterMs ?? 0),
          started: false,
        };
        opened.set(c.reference, charge);
      }
      if (now < charge.opensAt) throw new Error('the provider cannot be reached');
      if (!charge.started) {
        await env.client.workflow
          .start('chargeSession', {
            workflowId: charge.sessionId,
            taskQueue,
            args: [{ subscriptionId: c.subscriptionId, sessionId: charge.sessionId, plan: charge.plan }],
          })
          .catch((err: unknown) => {
            if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
          });
        charge.started = true;
      }
      return { sessionId: charge.sessionId };
    },
    recordSubscription: async (record: SubscriptionRecord) => {
      const id = record.view.subscriptionId;
      const seen = b.events.get(id) ?? [];
      for (const e of record.events) if (!seen.some((s) => s.id === e.id)) seen.push(e);
      b.events.set(id, seen);
      const row = b.rows.get(id);
      if (!row || record.version > row.version)
        b.rows.set(id, { version: record.version, view: record.view });
      return { applied: true, eventsAdded: record.events.length };
    },
    // Never late here unless a test says so: the stand-in reports before polling would start.
    getState: async ({ sessionId }: { sessionId: string }) => ({ session_id: sessionId }),
  };
  const worker = await Worker.create({
    connection: env.nativeConnection,
    namespace: env.namespace ?? 'default',
    taskQueue,
    workflowBundle: { code },
    activities,
  });
  const running = worker.run();
  b.subscribe = async (t) => {
    const reference = t.reference ?? `bill-${randomUUID().slice(0, 8)}`;
    const input = subscriptionInput({
      ...t,
      reference,
      // Webhooks on and late only after 10 days: the stand-in's report is what a charge waits for. A
      // provider that cannot be reached is asked again at most hourly.
      settings: t.settings ?? {
        polling: { webhooks: true, lateAfterMs: 10 * 86_400_000 },
        deadlines: { startMs: 3_600_000 },
      },
    });
    const handle = await env.client.workflow.start('subscriptionWorkflow', {
      workflowId: input.subscriptionId,
      taskQueue,
      args: [input],
    });
    return { handle, reference };
  };
  b.now = () => env.currentTimeMs();
  b.skipTo = async (iso) => {
    const wait = Date.parse(iso) - (await env.currentTimeMs());
    if (wait > 0) await env.sleep(wait);
  };
  b.runs = async (handle) => {
    const out: { runId: string; history: temporal.api.history.v1.IHistory }[] = [];
    for (let next: string | undefined = handle.firstExecutionRunId; next;) {
      const history = await env.client.workflow.getHandle(handle.workflowId, next).fetchHistory();
      out.push({ runId: next, history });
      next =
        history.events?.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ??
        undefined;
    }
    return out;
  };
  b.replay = async (handle) => {
    const failures: string[] = [];
    const runs = await b.runs(handle);
    for await (const r of Worker.runReplayHistories(
      { workflowBundle: { code } },
      runs.map((run) => ({ workflowId: `${handle.workflowId}/${run.runId}`, history: run.history })),
    ))
      if (r.error) failures.push(`${r.workflowId}: ${r.error.message}`);
    return failures;
  };
  b.close = async () => {
    worker.shutdown();
    await running;
    await env.teardown();
  };
  return b;
}

/** Event types of a subscription, in sequence. */
export const typesOf = (b: BillingEnv, subscriptionId: string): string[] =>
  (b.events.get(subscriptionId) ?? []).map((e) => e.type);
