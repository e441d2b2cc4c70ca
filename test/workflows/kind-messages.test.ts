/**
 * Each kind's workflow accepts exactly the messages the table of kinds says (common/kinds.ts KINDS),
 * read from the workflow's own metadata (`__temporal_workflow_metadata`, what the Temporal UI shows),
 * not from its source: a handler added or removed without the table fails here. The real workflow
 * bundle on the time-skipping server, with a fake provider; no time passes.
 */
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { KINDS, SESSION_KINDS, workflowOf, type SessionKind } from '../../common/kinds';
import type { SessionInput } from '../../common/session-input';
import { DEFAULT_SETTINGS } from '../../common/settings';
import { bySession, FakeProvider, opened } from '../helpers/fake-provider';
import { sharedWorkflowBundlePath } from '../helpers/temporal';
import { startTimeSkipping } from '../helpers/time-skipping';

jest.setTimeout(60_000);

let env: TestWorkflowEnvironment;
const providers = new Map<string, FakeProvider>();
const taskQueue = `kind-messages-${randomUUID()}`;
let worker: Worker | undefined;
let working: Promise<void> | undefined;

beforeAll(async () => {
  env = await startTimeSkipping();
  worker = await Worker.create({
    connection: env.nativeConnection,
    namespace: env.namespace ?? 'default',
    taskQueue,
    workflowBundle: { codePath: sharedWorkflowBundlePath() },
    activities: bySession(providers),
  });
  working = worker.run();
});
afterAll(async () => {
  worker?.shutdown();
  await working;
  await env?.teardown();
});

interface Metadata {
  definition?: {
    type?: string;
    queryDefinitions?: { name?: string }[];
    signalDefinitions?: { name?: string }[];
    updateDefinitions?: { name?: string }[];
  };
}

/** The handlers a kind's table entry promises: every session's, then the kind's own. */
function promised(kind: SessionKind) {
  const k = KINDS[kind];
  return {
    signals: ['payerReturned', 'providerEvent'],
    queries: ['providerEvents', 'recordedProviderEvents', 'session'],
    updates: [
      'awaitChange',
      ...k.decisions,
      ...(k.refunds ? ['refund'] : []),
      ...(k.starter ? ['claimStart', 'reportStart'] : []),
      ...(k.payouts ? ['addPayout'] : []),
    ].sort(),
  };
}

const names = (defs: { name?: string }[] | undefined) =>
  (defs ?? [])
    .map((d) => d.name ?? '')
    .filter((n) => !n.startsWith('__'))
    .sort();

describe.each(SESSION_KINDS)('%s', (kind) => {
  it(`its workflow (${workflowOf(kind)}) registers exactly what the table of kinds says`, async () => {
    const sessionId = `ps_${randomUUID().slice(0, 8)}`;
    const provider = new FakeProvider();
    const t0 = await env.currentTimeMs();
    provider.open(opened(sessionId), t0);
    providers.set(sessionId, provider);
    const input: SessionInput = {
      sessionId,
      kind,
      reference: `messages-${sessionId}`,
      request: { money: { amount: 100, currency: 'rub' } },
      start: { by: 'provider' },
      settings: DEFAULT_SETTINGS,
      initialSnapshot: provider.stateAt(sessionId, t0),
    };
    const handle = await env.client.workflow.start(workflowOf(kind), {
      workflowId: sessionId,
      taskQueue,
      args: [input],
    });
    try {
      const meta = await handle.query<Metadata>('__temporal_workflow_metadata');
      expect(meta.definition?.type).toBe(workflowOf(kind));
      expect({
        signals: names(meta.definition?.signalDefinitions),
        queries: names(meta.definition?.queryDefinitions),
        updates: names(meta.definition?.updateDefinitions),
      }).toEqual(promised(kind));
    } finally {
      await handle.terminate('the test read what it needed');
    }
  });
});
