/**
 * A session's waits with a timeout share one Temporal timer (patch `shared-timer`,
 * workflows/session/timer.ts): between two workflow tasks at most one timer is pending, and each wait
 * still ends at its own deadline. On the time-skipping server with a fake provider; the recorded
 * histories (test/fixtures/histories/) are measured the same way, against those recorded before.
 */
import { randomUUID } from 'node:crypto';
import * as path from 'node:path';
import { temporal } from '@temporalio/proto';
import type { SessionInput } from '../../common/session-input';
import { DEFAULT_SETTINGS, mergeSettings } from '../../common/settings';
import type { checkoutWorkflow } from '../../workflows/checkout';
import { HISTORIES_DIR, readHistories } from '../fixtures/histories/io';
import { FakeProvider, awaitingApproval, succeeded } from '../helpers/fake-provider';
import { useFakeProviderWorker } from '../helpers/fake-provider-worker';
import { statusesUpserted } from '../helpers/upserts';

jest.setTimeout(60_000);

const fx = useFakeProviderWorker('shared-timer');
type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
const { EventType } = temporal.api.enums.v1;

/** What a workflow task's completion adds to the history (its commands and messages). */
const FROM_COMMANDS = new Set<temporal.api.enums.v1.EventType>([
  EventType.EVENT_TYPE_TIMER_STARTED,
  EventType.EVENT_TYPE_TIMER_CANCELED,
  EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
  EventType.EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED,
  EventType.EVENT_TYPE_MARKER_RECORDED,
  EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES,
  EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED,
  EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED,
]);

/**
 * The most timers pending at once, counted once each workflow task's commands are all in (a task may
 * start the timer for a new deadline before it cancels the one it replaces).
 */
function mostTimersAtOnce(events: HistoryEvent[]): number {
  let pending = 0;
  let most = 0;
  let commands = false;
  for (const { eventType } of events) {
    if (commands && !FROM_COMMANDS.has(eventType!)) {
      most = Math.max(most, pending);
      commands = false;
    }
    if (eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED) commands = true;
    if (eventType === EventType.EVENT_TYPE_TIMER_STARTED) pending++;
    if (eventType === EventType.EVENT_TYPE_TIMER_FIRED || eventType === EventType.EVENT_TYPE_TIMER_CANCELED)
      pending--;
  }
  return Math.max(most, pending);
}

const count = (events: HistoryEvent[], type: temporal.api.enums.v1.EventType) =>
  events.filter((e) => e.eventType === type).length;

describe("a session's waits share one timer", () => {
  it('the hold, the late look and the polls: one timer at a time, each wait ending on time', async () => {
    // Approved automatically at t0, then at work for 20 s with no webhook: the change on the way holds
    // for 2 s (then shows `processing`), the look for late news comes at 3 s, then polls every 1-1.5 s.
    const provider = new FakeProvider();
    const id = `ps_${randomUUID().slice(0, 8)}`;
    const t0 = await fx.env.currentTimeMs();
    provider.open(awaitingApproval(id, 2_000), t0);
    provider.at(id, t0 + 20_000, succeeded);
    fx.providers.set(id, provider);
    const polling = { webhooks: true, lateAfterMs: 3_000, initialMs: 1_000, maxMs: 1_500, factor: 1.5 };
    const input: SessionInput = {
      sessionId: id,
      kind: 'card_checkout',
      reference: `timer-${id}`,
      request: { money: { amount: 2_000, currency: 'rub' } },
      start: { by: 'provider' },
      settings: mergeSettings(DEFAULT_SETTINGS, { followMs: 1_000, polling }),
      initialSnapshot: provider.stateAt(id, t0),
    };
    const handle = await fx.env.client.workflow.start<typeof checkoutWorkflow>('checkoutWorkflow', {
      workflowId: id,
      taskQueue: fx.taskQueue,
      args: [input],
    });
    try {
      const state = await handle.result();
      expect(state.final?.phase).toBe('succeeded');
      const events = (await handle.fetchHistory()).events ?? [];
      // The hold ran out on the shared timer (processing shown), and so did the late look and the polls
      // that found the result (each a timer fired), with the hold's and the look's deadlines apart.
      expect(statusesUpserted(events)).toEqual(['processing', 'succeeded']);
      expect(count(events, EventType.EVENT_TYPE_TIMER_FIRED)).toBeGreaterThanOrEqual(3);
      expect(mostTimersAtOnce(events)).toBe(1);
    } finally {
      await handle.terminate().catch(() => undefined);
      fx.providers.delete(id);
    }
  });

  it('in every recorded session: one timer at a time, where the recordings from before kept up to three', () => {
    const now = readHistories(HISTORIES_DIR);
    const before = readHistories(path.join(HISTORIES_DIR, 'before-shared-timer'));
    const most = (hs: typeof now) =>
      Object.fromEntries(hs.map((h) => [h.kind, mostTimersAtOnce(h.history.events)]));
    const timersNow = most(now);
    expect(Object.values(timersNow).every((n) => n <= 1)).toBe(true);
    // The measure can tell: the same kinds recorded before the patch held several timers at once.
    expect(Math.max(...Object.values(most(before)))).toBeGreaterThanOrEqual(3);
    const started = (hs: typeof now) =>
      hs.reduce((n, h) => n + count(h.history.events, EventType.EVENT_TYPE_TIMER_STARTED), 0);
    expect(started(now)).toBeLessThan(started(before));
  });
});
