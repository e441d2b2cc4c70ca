/**
 * `publishEvents`: events a workflow announces on its own (a subscription's), stored with their
 * deliveries in one transaction (store/events.ts); workers deliver them from there
 * (workers/event-dispatcher.ts). Safe to retry and to overlap: an event is stored once by id, and each
 * call carries every event of its subject not confirmed yet, in order, so a subject's events enter the
 * feed in sequence whichever call lands first. `publishEvent` (one event) is what runs recorded before
 * publishEvents existed still call. Sessions store their events with their record
 * (activities/store-activities.ts) instead.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { PaysagaEvent } from '../common/events';
import { eventProblem } from '../common/event-publishing';
import { scrubCardData } from '../provider/card';
import type { Store } from '../store/database';
import { publishEvents, type FanOut } from '../store/events';

/** What workflows call (proxyActivities<EventPublishingActivities>). */
export interface EventPublishingActivities {
  /**
   * Stores `event` (and queues its deliveries) and returns: it never waits for a delivery. An event that
   * breaks the contract (id not `evt_<subject>_<sequence>`, unknown type, no subject) fails without retry.
   */
  publishEvent(event: PaysagaEvent): Promise<void>;
  /**
   * Stores the valid ones of `events`, in order, then fails without retry naming any that broke the
   * contract (they are dropped: a retry could not mend them).
   */
  publishEvents(events: PaysagaEvent[]): Promise<void>;
}

export function createEventActivities(o: { store: Store; fanOut?: FanOut }): EventPublishingActivities {
  async function publish(events: PaysagaEvent[]): Promise<void> {
    const checked = events.map((e) => ({ e, problem: eventProblem(e) }));
    const valid = checked.filter((c) => !c.problem).map(({ e }) => ({ ...e, data: scrubCardData(e.data) }));
    if (valid.length > 0) await publishEvents(o.store, valid, o.fanOut);
    const refused = checked
      .filter((c) => c.problem)
      .map((c) => `invalid event ${String(c.e?.id)}: ${c.problem}`);
    if (refused.length > 0) throw ApplicationFailure.nonRetryable(refused.join('; '), 'InvalidEventError');
  }
  return {
    publishEvent: (event) => publish([event]),
    publishEvents: async (events) => {
      if (!Array.isArray(events))
        throw ApplicationFailure.nonRetryable('publishEvents takes an array of events', 'InvalidEventError');
      await publish(events);
    },
  };
}
