/**
 * A phase the session moves through by itself is shown in the Temporal UI and written to the store only
 * once it has held (patches `held-status`, workflows/session/visibility.ts, and `held-record`,
 * workflows/session-recorder.ts; one wait for both, workflows/session/hold.ts); what someone must see (a
 * result, a wait for someone, an Update's answer) at once. On the time-skipping server, whose clock
 * stands still unless the test lets it run, with a fake provider (which keeps the record's writes);
 * `test/workflows/visibility.test.ts` runs a real stack and `bench sessions` counts the upserts and writes.
 */
import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { approveUpdate, reportStartUpdate } from '../../common/messages';
import type { SessionInput } from '../../common/session-input';
import { DEFAULT_SETTINGS, mergeSettings, type SettingsOverrides } from '../../common/settings';
import type { checkoutWorkflow } from '../../workflows/checkout';
import { HOLD_MS } from '../../workflows/session/hold';
import { FakeProvider, awaitingApproval, succeeded } from '../helpers/fake-provider';
import { useFakeProviderWorker } from '../helpers/fake-provider-worker';
import { until } from '../helpers/until';
import { statusesUpserted } from '../helpers/upserts';

jest.setTimeout(60_000);

const fx = useFakeProviderWorker('held-status');
type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/**
 * A card checkout the provider holds for approval from t0, and `later` on it at t0 + `afterMs`; started
 * by the provider's call (the snapshot in the input) or, `byStarter`, waiting for its starter's report.
 */
async function checkout(
  settings: SettingsOverrides,
  later?: { afterMs: number },
  byStarter = false,
): Promise<{
  handle: WorkflowHandle<typeof checkoutWorkflow>;
  provider: FakeProvider;
  id: string;
  t0: number;
}> {
  const provider = new FakeProvider();
  const id = `ps_${randomUUID().slice(0, 8)}`;
  const t0 = await fx.env.currentTimeMs();
  provider.open(awaitingApproval(id, 2_000), t0);
  if (later) provider.at(id, t0 + later.afterMs, succeeded);
  fx.providers.set(id, provider);
  const input: SessionInput = {
    sessionId: id,
    kind: 'card_checkout',
    reference: `held-${id}`,
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

describe('a phase the session moves through by itself shows and is recorded once it has held', () => {
  it('processing: neither shown nor recorded while the clock stands still, both after the hold', async () => {
    const { handle, provider, id } = await checkout({}, { afterMs: 10 * 60_000 });
    try {
      // Approved automatically: the provider is at work. The workflow task that applied the approval's
      // answer is done, with no clock moved since.
      const settled = await until(
        'the approval applied',
        () => historyOf(handle),
        (events) => {
          const approved = events.findIndex((e) => type(e) === EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED);
          return (
            approved >= 0 &&
            events.slice(approved).some((e) => type(e) === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)
          );
        },
        20_000,
        20,
      );
      expect(settled.some((e) => type(e) === EventType.EVENT_TYPE_TIMER_FIRED)).toBe(false);
      expect(statusesUpserted(settled)).toEqual([]);
      // The session is in the store from its first task (awaiting the approval it then gave itself).
      expect(phasesWritten(provider)).toEqual(['awaiting_approval']);

      await fx.env.sleep(HOLD_MS + 100);
      const shown = await untilStatusShown(handle, 'processing shown');
      // awaiting_approval lasted one workflow task (approved automatically): never shown.
      expect(statusesUpserted(shown)).toEqual(['processing']);
      await until(
        'processing recorded',
        async () => phasesWritten(provider),
        (p) => p.length > 1,
        20_000,
        20,
      );
      expect(phasesWritten(provider)).toEqual(['awaiting_approval', 'processing']);

      const state = await handle.result();
      expect(state.final?.phase).toBe('succeeded');
      expect(statusesUpserted(await historyOf(handle))).toEqual(['processing', 'succeeded']);
      expect(phasesWritten(provider)).toEqual(['awaiting_approval', 'processing', 'succeeded']);
    } finally {
      await handle.terminate().catch(() => undefined);
      fx.providers.delete(id);
    }
  });

  it('a result within the hold: only the result is shown, and recorded after the first record', async () => {
    // Webhooks off: the session looks at once and often, and finds the result half a second later.
    const polling = { webhooks: false, lateAfterMs: 2_000, initialMs: 250, maxMs: 1_000, factor: 1.5 };
    const { handle, provider, id } = await checkout({ polling }, { afterMs: 500 });
    try {
      const state = await handle.result();
      expect(state.final?.phase).toBe('succeeded');
      expect(statusesUpserted(await historyOf(handle))).toEqual(['succeeded']);
      expect(phasesWritten(provider)).toEqual(['awaiting_approval', 'succeeded']);
    } finally {
      await handle.terminate().catch(() => undefined);
      fx.providers.delete(id);
    }
  });

  it('a wait for someone (a manual approval) shows at once', async () => {
    const { handle, id } = await checkout({ approval: { mode: 'manual', deadlineMs: 10 * 60_000 } });
    try {
      const events = await untilStatusShown(handle, 'awaiting_approval shown');
      expect(statusesUpserted(events)).toEqual(['awaiting_approval']);
      // With the clock standing still: no hold ran out, so it was shown in the task that got there.
      expect(events.some((e) => type(e) === EventType.EVENT_TYPE_TIMER_FIRED)).toBe(false);
    } finally {
      await handle.terminate().catch(() => undefined);
      fx.providers.delete(id);
    }
  });

  it("a session whose starter sends the card is first recorded with the starter's report", async () => {
    const { handle, provider, id, t0 } = await checkout({}, undefined, true);
    try {
      // Its first task is done with the clock standing still: nothing written yet.
      await until(
        'the first task done',
        () => historyOf(handle),
        (events) => events.some((e) => type(e) === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED),
        20_000,
        20,
      );
      expect(provider.writes).toEqual([]);
      // The starter's report (the card went to the provider): answered once it is in the store.
      const view = await handle.executeUpdate(reportStartUpdate, {
        args: [{ snapshot: provider.stateAt(id, t0) }],
      });
      expect(provider.writes.length).toBe(1);
      expect(provider.writes[0]!.version).toBeGreaterThanOrEqual(view.version);
      const events = await historyOf(handle);
      expect(events.some((e) => type(e) === EventType.EVENT_TYPE_TIMER_FIRED)).toBe(false);
    } finally {
      await handle.terminate().catch(() => undefined);
      fx.providers.delete(id);
    }
  });

  it("an Update's answer is in the store when the caller gets it, with no hold run out", async () => {
    const { handle, provider, id } = await checkout(
      { approval: { mode: 'manual', deadlineMs: 10 * 60_000 } },
      { afterMs: 10 * 60_000 },
    );
    try {
      await untilStatusShown(handle, 'awaiting_approval shown');
      // The approval's answer (the provider at work: a phase on the way) is recorded before it is given.
      const view = await handle.executeUpdate(approveUpdate, { args: [{}] });
      expect(view.phase).toBe('processing');
      // (Changes made after the answer in the same task may be in the same write: a later version.)
      expect(provider.writes.at(-1)?.phase).toBe('processing');
      expect(provider.writes.at(-1)?.version).toBeGreaterThanOrEqual(view.version);
      const events = await historyOf(handle);
      expect(events.some((e) => type(e) === EventType.EVENT_TYPE_TIMER_FIRED)).toBe(false);
    } finally {
      await handle.terminate().catch(() => undefined);
      fx.providers.delete(id);
    }
  });
});
