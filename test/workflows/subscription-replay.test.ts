/**
 * A subscription's history must replay from its first event on any worker: a worker that evicted it, a
 * restarted one, or one answering a query (a record write scheduled in another order on replay fails
 * with "Update machine does not handle this event: ActivityTaskScheduled"). The real subscription workflow
 * runs here with a stand-in for the sessions it opens (test/fixtures/subscription-workflows.ts) and a store
 * activity of random speed, while Updates arrive at random moments, alone and in bursts: during a charge, a
 * dunning wait, a pause and across continue-as-new (two periods a run). The worker keeps no workflow in its
 * cache, so every task replays the history from its first event, as after a restart or an eviction (a
 * nondeterministic order of commands fails a workflow task there); at the end every run of the chain is
 * replayed once more from its history. The seed is printed; SUBSCRIPTION_REPLAY_SEED repeats the driver's
 * choices (the timing is the machine's).
 */
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { activityInfo, getClient } from '@temporalio/activity';
import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  type Client,
} from '@temporalio/client';
import type { ChargeOpening } from '../../activities/types';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';

import {
  cancelSubscriptionUpdate,
  changeSubscriptionUpdate,
  pauseSubscriptionUpdate,
  resumeSubscriptionUpdate,
  subscriptionQuery,
  writeOffOwedUpdate,
} from '../../common/messages';
import type { PaysagaEvent } from '../../common/events';
import type { SubscriptionView } from '../../common/views';
import type { SubscriptionRecord } from '../../store/subscriptions';
import { subscriptionInput } from '../helpers/subscription-input';
import { runTestWorker, uniqueWorkflowId } from '../helpers/temporal';

const UNHANDLED_COMMAND =
  temporal.api.enums.v1.WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_UNHANDLED_COMMAND;

jest.setTimeout(120_000);

const FIXTURE = path.resolve(__dirname, '..', 'fixtures', 'subscription-workflows.ts');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** How long after its cancel the subscription may take to end. */
const END_MS = 30_000;

/** mulberry32: the driver's choices and pauses, repeatable from the printed seed. */
function rng(seed: string): () => number {
  let a = parseInt(seed, 16) >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Every run of the chain that starts with `runId`, following continue-as-new. */
async function runsOf(client: Client, workflowId: string, runId: string) {
  const runs: { runId: string; history: temporal.api.history.v1.IHistory }[] = [];
  for (let next: string | undefined = runId; next;) {
    const history = await client.workflow.getHandle(workflowId, next).fetchHistory();
    runs.push({ runId: next, history });
    next =
      history.events?.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  return runs;
}

describe('subscription workflow replay', () => {
  let code: string;
  beforeAll(async () => {
    ({ code } = await bundleWorkflowCode({ workflowsPath: FIXTURE, logger: undefined }));
  });

  it('replays every run after Updates at every point of its life', async () => {
    const seed = process.env.SUBSCRIPTION_REPLAY_SEED ?? randomBytes(4).toString('hex');
    console.log(`[subscription-replay] seed ${seed} (SUBSCRIPTION_REPLAY_SEED=${seed} repeats it)`);
    const random = rng(seed);
    // What a store would hold: the newest version of the subscription, each event once, in the order
    // the first copy arrived.
    const stored: PaysagaEvent[] = [];
    let row: { version: number; view: SubscriptionView } | undefined;
    const activities = {
      async recordSubscription(record: SubscriptionRecord) {
        // Fast or slow, so that an Update comes while earlier records are stored, on their way or queued.
        await sleep(Math.floor(Math.random() * 60));
        if (!row || record.version > row.version) row = { version: record.version, view: record.view };
        for (const e of record.events) if (!stored.some((s) => s.id === e.id)) stored.push(e);
        return { applied: true, eventsAdded: record.events.length };
      },
      async getState(): Promise<never> {
        throw new Error('not used: the stand-in sessions report their results');
      },
      /** Each charge as a stand-in session, once per reference (asked again: the same one). */
      async openCharge(c: ChargeOpening): Promise<{ sessionId: string }> {
        const sessionId = `ps_${c.reference.replace(/[^A-Za-z0-9]/g, '_')}`;
        await getClient()
          .workflow.start('chargeSession', {
            workflowId: sessionId,
            taskQueue: activityInfo().taskQueue,
            args: [{ subscriptionId: c.subscriptionId, reference: c.reference, sessionId }],
          })
          .catch((err: unknown) => {
            if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
          });
        return { sessionId };
      },
    };

    const { runs, view, refused } = await runTestWorker(
      { activities, workflowBundle: { code }, workerOptions: { maxCachedWorkflows: 0 } },
      async ({ client, taskQueue }) => {
        const subscriptionId = uniqueWorkflowId('sub-replay');
        const input = subscriptionInput({
          reference: subscriptionId.slice(4),
          token: 'rt_replay',
          amount: { amount: 1_000, currency: 'RUB' },
          schedule: { interval: 'second', count: 1 },
          dunning: { retryDelaysMs: [300], onExhausted: 'pause' },
          policy: { spacingMs: 100 },
          settings: { polling: { lateAfterMs: 60_000 } },
          customer: { user_id: 'replay' },
        });
        const handle = await client.workflow.start('subscriptionWorkflow', {
          taskQueue,
          workflowId: subscriptionId,
          args: [input],
        });
        const updates = [
          () => handle.executeUpdate(pauseSubscriptionUpdate, { args: [{}] }),
          () => handle.executeUpdate(resumeSubscriptionUpdate, { args: [{}] }),
          () =>
            handle.executeUpdate(changeSubscriptionUpdate, {
              args: [
                {
                  amount: 1_000 + Math.floor(random() * 500),
                  ...(random() < 0.5 ? { proration: 'next_invoice' as const } : {}),
                },
              ],
            }),
          () => handle.executeUpdate(cancelSubscriptionUpdate, { args: [{ reason: 'test over' }] }),
          () => handle.executeUpdate(writeOffOwedUpdate, { args: [{ reason: 'test over' }] }),
        ];
        let refused = 0;
        // An Update that reaches a run as it continues as new (every period) is not carried out: asked
        // again of the next run, as client/subscriptions.ts does.
        const send = async (i: number): Promise<void> => {
          for (let attempt = 1; ; attempt++)
            try {
              await updates[i]!();
              return;
            } catch (err) {
              if (err instanceof WorkflowNotFoundError && attempt < 5) continue;
              if (!(err instanceof WorkflowUpdateFailedError)) throw err;
              refused++; // a pause while paused: refused by the validator, as it should be
              return;
            }
        };
        // At least 15 s, and until it has continued as new twice, paid three charges and failed one
        // (what the test checks below; bounded: 60 s).
        const since = Date.now();
        const farEnough = async () => {
          const v = await handle.query(subscriptionQuery);
          return v.runs >= 2 && v.totals.succeeded >= 3 && v.totals.failed >= 1;
        };
        while (Date.now() - since < 15_000 || (Date.now() - since < 60_000 && !(await farEnough()))) {
          const burst = 1 + Math.floor(random() * 3);
          // Mostly changes and resumes, so that it spends most of its time charging.
          const pick = () => [0, 1, 1, 2, 2, 2][Math.floor(random() * 6)]!;
          await Promise.all(Array.from({ length: burst }, () => send(pick())));
          await sleep(Math.floor(random() * 120));
        }
        await handle.executeUpdate(resumeSubscriptionUpdate, { args: [{}] }).catch(() => undefined);
        await send(3);
        // A period left unpaid by the cancel (a charge that failed in flight, or one in dunning) is owed:
        // written off once the charge in flight has its result, so that the workflow ends.
        // Bounded, and a subscription that does not end says where it stands.
        const endBy = Date.now() + END_MS;
        const notEnded = async () =>
          new Error(
            `the subscription has not ended ${END_MS / 1000} s after its cancel: ` +
              JSON.stringify(await handle.query(subscriptionQuery).catch(() => undefined)),
          );
        for (;;) {
          const v = await handle.query(subscriptionQuery).catch(() => undefined);
          if (!v || (v.charges.at(-1)?.outcome !== 'pending' && !v.totals.owedPeriods)) break;
          if (Date.now() > endBy) throw await notEnded();
          if (v.charges.at(-1)?.outcome !== 'pending') await send(4);
          await sleep(100);
        }
        let timer: NodeJS.Timeout | undefined;
        const view = (await Promise.race([
          handle.result(),
          new Promise((_, reject) => {
            timer = setTimeout(() => void notEnded().then(reject), Math.max(0, endBy - Date.now()));
          }),
        ]).finally(() => clearTimeout(timer))) as SubscriptionView;
        return { runs: await runsOf(client, subscriptionId, handle.firstExecutionRunId), view, refused };
      },
    );

    // The test did reach the points it is about.
    expect(runs.length).toBeGreaterThanOrEqual(3);
    expect(view.status).toBe('canceled');
    expect(view.totals.succeeded).toBeGreaterThanOrEqual(3);
    expect(view.totals.failed).toBeGreaterThanOrEqual(1);
    expect(refused).toBeGreaterThan(0);
    const eventTypes = (h: temporal.api.history.v1.IHistory) =>
      (h.events ?? []).map((e) => Object.keys(e).find((k) => k.endsWith('EventAttributes')));
    const all = runs.flatMap((r) => eventTypes(r.history));
    expect(all).toContain('workflowExecutionUpdateAcceptedEventAttributes');
    // Live, no workflow task failed, except the server's own refusal of a task that was completing the
    // workflow while a new event (the last charge's result) arrived: that task runs again with the
    // event (UNHANDLED_COMMAND, normal Temporal behaviour, not the workflow's fault). Then each run
    // replays from its first event.
    const failed = runs.flatMap((r) =>
      (r.history.events ?? []).flatMap((e) =>
        e.workflowTaskFailedEventAttributes ? [String(e.workflowTaskFailedEventAttributes.cause)] : [],
      ),
    );
    expect(failed.filter((cause) => cause !== String(UNHANDLED_COMMAND))).toEqual([]);
    // Every event stored, in its subscription's sequence, although the calls overlapped.
    expect(stored.map((e) => e.sequence)).toEqual(stored.map((_, i) => i + 1));
    expect(stored.filter((e) => e.type === 'subscription.canceled')).toHaveLength(1);
    // One run per period: never a period charged twice across them.
    const paid = view.charges.filter((c) => c.outcome === 'succeeded').map((c) => c.period);
    expect(new Set(paid).size).toBe(paid.length);
    // The store's row is the subscription as it ended.
    expect(row?.view).toEqual(view);

    const failures: string[] = [];
    for await (const r of Worker.runReplayHistories(
      { workflowBundle: { code } },
      runs.map((run) => ({ workflowId: `${view.subscriptionId}/${run.runId}`, history: run.history })),
    ))
      if (r.error) failures.push(`${r.workflowId}: ${r.error.message}`);
    expect(failures).toEqual([]);
  });
});
