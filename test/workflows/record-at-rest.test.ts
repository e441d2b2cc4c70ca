/**
 * A session is written to the store and shown in the Temporal UI when it comes to rest
 * (workflows/session/recorder.ts): no provider call or verification of its own in flight. A phase it
 * passes through during a call is neither; a wait for someone is both, at once; an Update answers once
 * its version is stored. On the time-skipping server, whose clock stands still unless the test lets it
 * run, with a fake provider that keeps the record's writes; `test/workflows/visibility.test.ts` runs a
 * real stack.
 */
import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { approveUpdate, reportStartSignal } from '../../common/messages';
import type { SessionInput } from '../../common/session-input';
import { DEFAULT_SETTINGS, mergeSettings, type SettingsOverrides } from '../../common/settings';
import type { checkoutWorkflow } from '../../workflows/checkout';
import { FakeProvider, awaitingApproval, succeeded } from '../helpers/fake-provider';
import { useFakeProviderWorker } from '../helpers/fake-provider-worker';
import { until } from '../helpers/until';
import { statusesUpserted } from '../helpers/upserts';

jest.setTimeout(60_000);

const fx = useFakeProviderWorker('record-at-rest');
type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/**
 * A card checkout the provider holds for approval from t0, and `later` on it at t0 + `afterMs`; started
 * by the provider's call (the snapshot in the input) or, `byStarter`, waiting for its starter's report.
 */
async function checkout(
  settings: SettingsOverrides,
  later?: { afterMs: number },
  byStarter = false,
  callDelayMs = 0,
): Promise<{
  handle: WorkflowHandle<typeof checkoutWorkflow>;
  provider: FakeProvider;
  id: string;
  t0: number;
}> {
  const provider = new FakeProvider();
  provider.callDelayMs = callDelayMs;
  const id = `ps_${randomUUID().slice(0, 8)}`;
  const t0 = await fx.env.currentTimeMs();
  provider.open(awaitingApproval(id, 2_000), t0);
  if (later) provider.at(id, t0 + later.afterMs, succeeded);
  fx.providers.set(id, provider);
  const input: SessionInput = {
    sessionId: id,
    kind: 'card_checkout',
    reference: `rest-${id}`,
    request: { money: { amount: 2_000, currency: 'rub' } },
    start: { by: byStarter ? 'starter' : 'provider' },
    settings: mergeSettings(DEFAULT_SETTINGS, { followMs: 1_000, ...settings }),
    ...(byStarter ? {} : { initialSnapshot: provider.stateAt(id, t0) }),
  };
  const handle = await fx.env.client.workflow.start<typeof checkoutWorkflow>('checkoutWorkflow', {
    workflowId: id,
    taskQueue: fx.taskQueue,
    args: [input],
  });
  return { handle, provider, id, t0 };
}

async function historyOf(handle: WorkflowHandle): Promise<HistoryEvent[]> {
  return (await handle.fetchHistory()).events ?? [];
}

/** The history once a first PaymentStatus has been upserted (in real time: the server's clock is not moved). */
function untilStatusShown(handle: WorkflowHandle, what: string): Promise<HistoryEvent[]> {
  return until(
    what,
    () => historyOf(handle),
    (events) => statusesUpserted(events).length > 0,
    20_000,
    20,
  );
}

const type = (e: HistoryEvent) => e.eventType;
const { EventType } = temporal.api.enums.v1;

/** The phases written to the store, in order. */
const phasesWritten = (provider: FakeProvider) => provider.writes.map((w) => w.phase);

describe('a session is recorded and shown when it comes to rest', () => {
  it('a phase passed through during a provider call is neither written nor shown', async () => {
    const { handle, provider, id } = await checkout({}, { afterMs: 10 * 60_000 }, false, 300);
    try {
      // Approved automatically in the first task: awaiting_approval lasted only while the approval
      // was in flight. The provider is at work (processing) once its answer is applied.
      const shown = await untilStatusShown(handle, 'processing shown');
      expect(statusesUpserted(shown)).toEqual(['processing']);
      await until(
        'processing recorded',
        async () => phasesWritten(provider),
        (p) => p.length > 0,
        20_000,
        20,
      );
      expect(phasesWritten(provider)).toEqual(['processing']);
      // Every write began with no provider call of the session in flight.
      expect(provider.writesDuringCalls).toBe(0);

      const state = await handle.result();
      expect(state.final?.phase).toBe('succeeded');
      expect(statusesUpserted(await historyOf(handle))).toEqual(['processing', 'succeeded']);
      expect(phasesWritten(provider)).toEqual(['processing', 'succeeded']);
      expect(provider.writesDuringCalls).toBe(0);
    } finally {
      await handle.terminate().catch(() => undefined);
      fx.providers.delete(id);
    }
  });

  it('a wait for someone (a manual approval) is written and shown at once', async () => {
    const { handle, provider, id } = await checkout({
      approval: { mode: 'manual', deadlineMs: 10 * 60_000 },
    });
    try {
      const events = await untilStatusShown(handle, 'awaiting_approval shown');
      expect(statusesUpserted(events)).toEqual(['awaiting_approval']);
      // With the clock standing still: shown in the task that got there.
      expect(events.some((e) => type(e) === EventType.EVENT_TYPE_TIMER_FIRED)).toBe(false);
      await until(
        'recorded',
        async () => phasesWritten(provider),
        (p) => p.length > 0,
        20_000,
        20,
      );
      expect(phasesWritten(provider)).toEqual(['awaiting_approval']);
    } finally {
      await handle.terminate().catch(() => undefined);
      fx.providers.delete(id);
    }
  });

  it("a session whose starter sends the card is first written with the starter's report", async () => {
    const { handle, provider, id, t0 } = await checkout({}, undefined, true);
    try {
      // Its first task is done: the starter's call is on its way, so nothing is written yet.
      await until(
        'the first task done',
        () => historyOf(handle),
        (events) => events.some((e) => type(e) === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED),
        20_000,
        20,
      );
      expect(provider.writes).toEqual([]);
      // The starter's report (the card went to the provider): the session, at rest again, writes it.
      await handle.signal(reportStartSignal, { snapshot: provider.stateAt(id, t0) });
      await until(
        'written with the report',
        async () => provider.writes.length,
        (n) => n >= 1,
        20_000,
        20,
      );
    } finally {
      await handle.terminate().catch(() => undefined);
      fx.providers.delete(id);
    }
  });

  it("an Update's answer is in the store when the caller gets it", async () => {
    const { handle, provider, id } = await checkout(
      { approval: { mode: 'manual', deadlineMs: 10 * 60_000 } },
      { afterMs: 10 * 60_000 },
    );
    try {
      await untilStatusShown(handle, 'awaiting_approval shown');
      const view = await handle.executeUpdate(approveUpdate, { args: [{}] });
      expect(view.phase).toBe('processing');
      expect(provider.writes.at(-1)?.phase).toBe('processing');
      expect(provider.writes.at(-1)?.version).toBeGreaterThanOrEqual(view.version);
    } finally {
      await handle.terminate().catch(() => undefined);
      fx.providers.delete(id);
    }
  });
});
