/**
 * Each kind's workflow accepts exactly the messages the table of kinds says (common/kinds.ts KINDS),
 * read from the workflow's own metadata (`__temporal_workflow_metadata`, what the Temporal UI shows),
 * not from its source: a handler added or removed without the table fails here. The real workflow
 * bundle on the time-skipping server, with a fake provider; no time passes.
 */
import { randomUUID } from 'node:crypto';
import { KINDS, SESSION_KINDS, workflowOf, type SessionKind } from '../../common/kinds';
import type { SessionInput } from '../../common/session-input';
import { DEFAULT_SETTINGS } from '../../common/settings';
import { FakeProvider, opened } from '../helpers/fake-provider';
import { useFakeProviderWorker } from '../helpers/fake-provider-worker';

jest.setTimeout(60_000);

const fx = useFakeProviderWorker('kind-messages');

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
    signals: ['payerReturned', 'providerEvent', ...(k.starter ? ['reportStart'] : [])].sort(),
    queries: ['providerEvents', 'recordedProviderEvents', 'session'],
    updates: [
      ...k.decisions,
      ...(k.refunds ? ['refund'] : []),
      ...(k.starter ? ['claimStart'] : []),
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
    const t0 = await fx.env.currentTimeMs();
    provider.open(opened(sessionId), t0);
    fx.providers.set(sessionId, provider);
    const input: SessionInput = {
      sessionId,
      kind,
      reference: `messages-${sessionId}`,
      request: { money: { amount: 100, currency: 'rub' } },
      start: { by: 'provider' },
      settings: DEFAULT_SETTINGS,
      initialSnapshot: provider.stateAt(sessionId, t0),
    };
    const handle = await fx.env.client.workflow.start(workflowOf(kind), {
      workflowId: sessionId,
      taskQueue: fx.taskQueue,
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
