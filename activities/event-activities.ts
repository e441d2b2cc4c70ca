/**
 * `publishEvent`: an event a workflow announces on its own (a subscription's), stored with its
 * deliveries in one transaction (store/events.ts); workers deliver it from there
 * (workers/event-dispatcher.ts). Safe to retry: an event is stored once by id. Sessions store their events
 * with their record (activities/store-activities.ts) instead.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { PaysagaEvent } from '../common/events';
import { eventProblem } from '../common/event-publishing';
import { scrubCardData } from '../provider/schemas/card';
import type { Store } from '../store/database';
import { publishEvents, type FanOut } from '../store/events';

/** What workflows call (proxyActivities<EventPublishingActivities>). */
export interface EventPublishingActivities {
  /**
   * Stores `event` (and queues its deliveries) and returns: it never waits for a delivery. An event that
   * breaks the contract (id not `evt_<subject>_<sequence>`, unknown type, no subject) fails without retry.
   */
  publishEvent(event: PaysagaEvent): Promise<void>;
}

export function createEventActivities(o: { store: Store; fanOut?: FanOut }): EventPublishingActivities {
  return {
    async publishEvent(event) {
      const problem = eventProblem(event);
      if (problem)
        throw ApplicationFailure.nonRetryable(
          `invalid event ${String(event?.id)}: ${problem}`,
          'InvalidEventError',
        );
      await publishEvents(o.store, [{ ...event, data: scrubCardData(event.data) }], o.fanOut);
    },
  };
}
