/**
 * What the verdict compares, read once the run has settled: paysaga's view of every session and
 * subscription (through the API), the provider's truth (`transaction/state` of every session, signed
 * with the partner's key, outside paysaga; the sandbox's ledger; the fault rules with their counters),
 * and Temporal's (every workflow that failed, was terminated or timed out; open workflows whose task keeps
 * failing).
 */
import { Client, Connection } from '@temporalio/client';
import type { PaysagaApiClient, Session, Subscription } from '../../client/http';
import { codecFromEnv } from '../../platform/codec';
import type { PaysagaEvent } from '../../common/events';
import { openStore } from '../../store/database';
import { sessionState } from '../../store/sessions';
import { sessionViewOf } from '../../common/session-view';
import { ProviderClient } from '../../provider';
import type { SessionInfo } from '../../provider/schemas';
import type { FaultRuleView } from '../../sandbox/faults';
import type { LedgerEntry } from '../../sandbox/ledger';
import type { ChaosLog } from './chaos';
import type { Journal } from './journal';
import type { Plan } from './plan';

/** What could not be read, and why. */
export interface Unreadable {
  unreadable: string;
}

export const isUnreadable = (x: object | undefined): x is Unreadable => !!x && 'unreadable' in x;

export interface WorkflowProblem {
  workflowId: string;
  type: string;
  problem: string;
}

export interface Evidence {
  plan: Plan;
  journal: Journal;
  chaos: ChaosLog;
  /** paysaga's session as GET /v1/sessions/{id} shows it, or why it could not be read. */
  views: Map<string, Session | Unreadable>;
  subscriptions: Map<string, Subscription | Unreadable>;
  /** The session as paysaga's store holds its row (read with SQL, not through the API). */
  stored: Map<string, Session | Unreadable>;
  /** Every event of the feed (`GET /v1/events` paged from the start), in its order; or why not. */
  events: PaysagaEvent[] | Unreadable;
  /** transaction/state of every session the run knows of, and of every session the ledger names. */
  provider: Map<string, SessionInfo | Unreadable>;
  ledger: LedgerEntry[];
  faultRules: FaultRuleView[];
  workflows: {
    /** Failed, terminated or timed out: none may be. */
    ended: WorkflowProblem[];
    /** Open with a workflow task failing again and again, or a subscription still running. */
    stuck: WorkflowProblem[];
    counts: Record<string, number>;
  };
}

/** Every session id the run knows of: the sessions it created and the charges of its subscriptions. */
export function knownSessionIds(journal: Journal, subscriptions: Evidence['subscriptions']): string[] {
  const ids = new Set<string>();
  for (const r of journal.sessions) for (const id of r.sessionIds) ids.add(id);
  for (const s of subscriptions.values())
    if (!isUnreadable(s)) for (const c of s.charges) if (c.sessionId) ids.add(c.sessionId);
  return [...ids];
}

/** Runs `fn` over `items`, at most `n` at a time. */
export async function inBatches<T>(
  items: readonly T[],
  n: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

export interface TruthSources {
  api: PaysagaApiClient;
  sandboxUrl: string;
  projectId: string;
  partnerPrivateKey: string;
  temporalAddress: string;
  namespace: string;
  taskQueue: string;
  /** PAYSAGA_CODEC_KEYS of the stack: memos and search attributes are read through the codec. */
  codecKeys: string;
  /** paysaga's store (PAYSAGA_DATABASE_URL of the stack). */
  storeUrl: string;
}

export async function collectEvidence(
  plan: Plan,
  journal: Journal,
  chaos: ChaosLog,
  src: TruthSources,
): Promise<Evidence> {
  const subscriptions = new Map<string, Subscription | Unreadable>();
  for (const r of journal.subscriptions) {
    if (!r.subscriptionId) continue;
    try {
      subscriptions.set(r.subscriptionId, await src.api.subscriptions.get(r.subscriptionId));
    } catch (err) {
      subscriptions.set(r.subscriptionId, { unreadable: (err as Error).message });
    }
  }

  const views = new Map<string, Session | Unreadable>();
  const ids = knownSessionIds(journal, subscriptions);
  await inBatches(ids, 8, async (id) => {
    try {
      views.set(id, await src.api.sessions.get(id));
    } catch (err) {
      views.set(id, { unreadable: (err as Error).message });
    }
  });

  const stored = new Map<string, Session | Unreadable>();
  const store = openStore({ url: src.storeUrl, schema: 'paysaga', poolSize: 4 });
  try {
    await inBatches(ids, 4, async (id) => {
      try {
        const state = await sessionState(store, id);
        stored.set(id, state ? (sessionViewOf(state) as Session) : { unreadable: 'no row in the store' });
      } catch (err) {
        stored.set(id, { unreadable: (err as Error).message });
      }
    });
  } finally {
    await store.close();
  }
  const events = await everyEvent(src.api);

  const ledgerRes = await fetch(
    `${src.sandboxUrl}/sandbox/ledger?project_id=${encodeURIComponent(src.projectId)}`,
  );
  const ledger = ((await ledgerRes.json()) as { entries: LedgerEntry[] }).entries;
  const faultsRes = await fetch(`${src.sandboxUrl}/sandbox/faults`);
  const faultRules = ((await faultsRes.json()) as { rules: FaultRuleView[] }).rules;

  const provider = new Map<string, SessionInfo | Unreadable>();
  const client = new ProviderClient({
    baseUrl: src.sandboxUrl,
    projectId: src.projectId,
    privateKey: src.partnerPrivateKey,
    maxRetries: 3,
    timeoutMs: 15_000,
  });
  try {
    const all = new Set([...ids, ...ledger.map((e) => e.sessionId)]);
    await inBatches([...all], 8, async (id) => {
      try {
        provider.set(id, (await client.state({ session_id: id })).session_info);
      } catch (err) {
        provider.set(id, { unreadable: (err as Error).message });
      }
    });
  } finally {
    await client.close();
  }

  return {
    plan,
    journal,
    chaos,
    views,
    stored,
    events,
    subscriptions,
    provider,
    ledger,
    faultRules,
    workflows: await workflowHealth(src),
  };
}

/** The whole event feed, page after page, as a backend reading it from the start would. */
async function everyEvent(api: PaysagaApiClient): Promise<PaysagaEvent[] | Unreadable> {
  const all: PaysagaEvent[] = [];
  try {
    for (let after: string | undefined; ;) {
      const page = await api.events.list({ limit: 100, ...(after ? { after } : {}) });
      all.push(...page.events);
      if (!page.hasMore || !page.next) return all;
      after = page.next;
    }
  } catch (err) {
    return { unreadable: `the event feed after ${all.length} events: ${(err as Error).message}` };
  }
}

/** Workflow task attempts from which an open workflow counts as stuck (its task fails again and again). */
const STUCK_TASK_ATTEMPTS = 3;

async function workflowHealth(src: TruthSources): Promise<Evidence['workflows']> {
  const connection = await Connection.connect({ address: src.temporalAddress });
  try {
    const client = new Client({
      connection,
      namespace: src.namespace,
      dataConverter: { payloadCodecs: [codecFromEnv({ PAYSAGA_CODEC_KEYS: src.codecKeys })!] },
    });
    const ended: WorkflowProblem[] = [];
    const stuck: WorkflowProblem[] = [];
    const counts: Record<string, number> = {};
    for await (const wf of client.workflow.list({ query: `TaskQueue = '${src.taskQueue}'` })) {
      const status = wf.status.name;
      counts[`${wf.type} ${status}`] = (counts[`${wf.type} ${status}`] ?? 0) + 1;
      if (status === 'FAILED' || status === 'TERMINATED' || status === 'TIMED_OUT')
        ended.push({ workflowId: wf.workflowId, type: wf.type, problem: status.toLowerCase() });
      if (status !== 'RUNNING') continue;
      if (wf.type === 'subscriptionWorkflow')
        stuck.push({ workflowId: wf.workflowId, type: wf.type, problem: 'still running after its cancel' });
      const d = await client.workflow.getHandle(wf.workflowId, wf.runId).describe();
      const task = d.raw.pendingWorkflowTask;
      if (task && (task.attempt ?? 0) >= STUCK_TASK_ATTEMPTS)
        stuck.push({
          workflowId: wf.workflowId,
          type: wf.type,
          problem: `its workflow task failed ${task.attempt} times in a row`,
        });
    }
    return { ended, stuck, counts };
  } finally {
    await connection.close();
  }
}

/**
 * Everything the run read of each subject of a violation (paysaga's view with its event log, the stored
 * row, the provider's state, the ledger's entries), for the reader of a red run.
 */
export function evidenceOf(ev: Evidence, violations: readonly { subject: string }[]): object {
  const subjects = [...new Set(violations.map((v) => v.subject))];
  return Object.fromEntries(
    subjects.map((id) => [
      id,
      {
        violations: violations.filter((v) => v.subject === id),
        view: ev.views.get(id) ?? ev.subscriptions.get(id),
        stored: ev.stored.get(id),
        provider: ev.provider.get(id),
        ledger: ev.ledger.filter((e) => e.sessionId === id),
      },
    ]),
  );
}
