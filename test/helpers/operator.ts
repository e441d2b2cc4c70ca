/**
 * An operator looking at workflows the way the Temporal UI's workflow page does (describe, the history,
 * the built-in queries `__temporal_workflow_metadata`, `__stack_trace` and `__enhanced_stack_trace`, and
 * paysaga's own query of the workflow's type), over and over while they run; and the replay of every
 * history a workflow left, as a worker replays after a restart or a cache eviction. Looking must never
 * hurt (docs/decisions/018-looking-never-hurts.md).
 *
 *   const operator = new Operator(client, `TaskQueue="${taskQueue}"`);
 *   operator.start();  ...  const looked = await operator.stop();
 *   const replay = await replayAll(client, `TaskQueue="${taskQueue}"`, bundlePath);
 */
import { Client } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { Worker } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { askAgain } from '../../client/ask-again';

const { WorkflowTaskFailedCause } = temporal.api.enums.v1;
/**
 * Causes of a failed workflow task that are Temporal's ordinary flow, not a fault of the workflow code:
 * news arrived while the task was completing (the worker takes it again with the news), or the workflow
 * was terminated while a task of it was at work.
 */
const ORDINARY = new Set<number>([
  WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_UNHANDLED_COMMAND,
  WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_RESET_STICKY_TASK_QUEUE,
  WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_FORCE_CLOSE_COMMAND,
]);

/** paysaga's own query of each workflow type. */
const OWN_QUERY: Record<string, string> = {
  checkoutWorkflow: 'session',
  fpsPaymentWorkflow: 'session',
  fpsBindingWorkflow: 'session',
  payoutWorkflow: 'session',
  identityCheckWorkflow: 'session',
  subscriptionWorkflow: 'subscription',
  reconcilerWorkflow: 'reconciler',
};

export interface Looked {
  /** Running workflows looked at (a workflow counts once per look). */
  looks: number;
  /** The distinct workflows looked at while they ran. */
  workflows: number;
  queries: number;
  /** `__stack_trace` answers that name at least one frame of paysaga's own workflow code. */
  stackTracesWithFrames: number;
  stackTraces: number;
  /** Questions given up after ASK_MS without an answer. */
  unanswered: number;
  /** Queries answered "ask again" (news came with them: workflows/query-guard.ts), then asked again. */
  askedAgain: number;
  /** Query failures other than "the workflow has closed meanwhile", by message. */
  failures: Map<string, number>;
}

export class Operator {
  private running = false;
  private loops: Promise<void>[] = [];
  private readonly seen = new Set<string>();
  private readonly looked: Looked = {
    looks: 0,
    workflows: 0,
    queries: 0,
    stackTracesWithFrames: 0,
    stackTraces: 0,
    unanswered: 0,
    askedAgain: 0,
    failures: new Map(),
  };

  /** A client as the UI has: without paysaga's interceptors, so that every answer is seen as it is. */
  private readonly client: Client;

  constructor(
    client: Client,
    /** Which workflows are looked at (a visibility query). */
    private readonly filter: string,
  ) {
    const { namespace, dataConverter } = client.options;
    this.client = new Client({ connection: client.connection, namespace, dataConverter });
  }

  /** Starts `eyes` operators, each going through the running workflows again and again. */
  start(eyes = 3): void {
    this.running = true;
    for (let i = 0; i < eyes; i++) this.loops.push(this.lookAround(i));
  }

  async stop(): Promise<Looked> {
    this.running = false;
    await Promise.all(this.loops);
    return { ...this.looked, workflows: this.seen.size };
  }

  private async lookAround(offset: number): Promise<void> {
    while (this.running) {
      const ids: { workflowId: string; type: string }[] = [];
      try {
        await this.client.withAbortSignal(AbortSignal.timeout(ASK_MS), async () => {
          for await (const w of this.client.workflow.list({
            query: `${this.filter} AND ExecutionStatus="Running"`,
          }))
            ids.push({ workflowId: w.workflowId, type: w.type });
        });
      } catch {
        await sleep(200);
        continue;
      }
      if (ids.length === 0) await sleep(20);
      // Each eye starts at its own place in the list, so that they look at different workflows at once.
      for (let i = 0; i < ids.length && this.running; i++)
        await this.lookAt(ids[(i + offset * 7) % ids.length]!);
    }
  }

  /**
   * Opens one workflow now, as a person does who was just given its id (a backend's support ticket
   * names the session it started a moment ago): every session is looked at while it runs, however
   * fast the eyes go through the list on a loaded machine.
   */
  async look(workflowId: string): Promise<void> {
    const described = await this.ask(() => this.client.workflow.getHandle(workflowId).describe());
    if (described) await this.lookAt({ workflowId, type: described.type }, described.status.name);
  }

  /** What the UI's workflow page asks when it opens a workflow, then its paysaga query. */
  private async lookAt(
    { workflowId, type }: { workflowId: string; type: string },
    known?: string,
  ): Promise<void> {
    const handle = this.client.workflow.getHandle(workflowId);
    this.looked.looks++;
    const status = known ?? (await this.ask(() => handle.describe()))?.status.name;
    // Counted as looked at while it ran only if it was still running when the page opened.
    if (status === 'RUNNING') this.seen.add(workflowId);
    await this.ask(() => handle.fetchHistory());
    await this.ask(() => handle.query('__temporal_workflow_metadata'));
    const trace = await this.ask(() => handle.query<string>('__stack_trace'));
    if (typeof trace === 'string') {
      this.looked.stackTraces++;
      if (/workflows\/[\w/.-]+\.ts/.test(trace)) this.looked.stackTracesWithFrames++;
    }
    await this.ask(() => handle.query('__enhanced_stack_trace'));
    const own = OWN_QUERY[type];
    if (own) await this.ask(() => handle.query(own));
  }

  /** Asks, and once more when the answer is "ask again" (as a person refreshing the page would). */
  private async ask<T>(call: () => Promise<T>): Promise<T | undefined> {
    const answer = await this.askOnce(call);
    if (answer !== ASK_AGAIN) return answer;
    this.looked.askedAgain++;
    const again = await this.askOnce(call);
    return again === ASK_AGAIN ? undefined : again;
  }

  private async askOnce<T>(call: () => Promise<T>): Promise<T | undefined | typeof ASK_AGAIN> {
    this.looked.queries++;
    // As a person would: a question nobody answers within ASK_MS (no worker of the workflow running
    // just then, say) is given up, its call canceled; asking again comes with the next look. No call
    // outlives its question, so none is left in flight when the test closes its connection.
    const giveUp = AbortSignal.timeout(ASK_MS);
    try {
      return await this.client.withAbortSignal(giveUp, call);
    } catch (err) {
      if (giveUp.aborted) {
        this.looked.unanswered++;
        return undefined;
      }
      const message = (err as Error).message ?? String(err);
      if (askAgain(err)) return ASK_AGAIN;
      // A workflow that ended between the list and the query is no failure of looking.
      if (!/not found|completed|closed|terminated/i.test(message))
        this.looked.failures.set(message, (this.looked.failures.get(message) ?? 0) + 1);
      return undefined;
    }
  }
}

/** How long a look waits for an answer. */
const ASK_MS = 10_000;

const ASK_AGAIN = Symbol('ask again');

export interface Replayed {
  histories: number;
  /**
   * Workflow tasks that failed while the workflows ran, for a cause other than Temporal's ordinary flow
   * (a nondeterminism seen live shows here).
   */
  failedTasks: { workflowId: string; runId: string; cause: string }[];
  failures: { workflowId: string; runId: string; error: string }[];
}

/**
 * Replays every run the filter finds (closed ones whole, running ones as far as they got) against the
 * bundle, as a worker does after a restart or a cache eviction.
 */
export async function replayAll(
  client: Client,
  filter: string,
  bundlePath: string,
  /** The workers' data converter (their payload codec), when payloads are encrypted. */
  dataConverter?: DataConverter,
): Promise<Replayed> {
  const runs: { workflowId: string; runId: string; history: temporal.api.history.v1.IHistory }[] = [];
  const failedTasks: Replayed['failedTasks'] = [];
  for await (const w of client.workflow.list({ query: filter })) {
    const history = await client.workflow.getHandle(w.workflowId, w.runId).fetchHistory();
    runs.push({ workflowId: w.workflowId, runId: w.runId, history });
    for (const e of history.events ?? []) {
      const failed = e.workflowTaskFailedEventAttributes;
      if (failed && !ORDINARY.has(Number(failed.cause)))
        failedTasks.push({
          workflowId: w.workflowId,
          runId: w.runId,
          cause: `${WorkflowTaskFailedCause[Number(failed.cause)]}: ${failed.failure?.message ?? ''}`,
        });
    }
  }
  const failures: Replayed['failures'] = [];
  const results = Worker.runReplayHistories(
    { workflowBundle: { codePath: bundlePath }, ...(dataConverter ? { dataConverter } : {}) },
    runs.map((r) => ({ workflowId: `${r.workflowId}|${r.runId}`, history: r.history })),
  );
  for await (const r of results) {
    if (!r.error) continue;
    const [workflowId = '', runId = ''] = r.workflowId.split('|');
    failures.push({ workflowId, runId, error: `${r.error.name}: ${r.error.message}` });
  }
  return { histories: runs.length, failedTasks, failures };
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
