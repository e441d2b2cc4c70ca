/**
 * For workflows that announce events on their own (subscriptions): publish without waiting, in the
 * order given. `publish` schedules the `publishEvents` activity at once, in the code that published,
 * carrying every event not confirmed yet (so a subject's events reach the store in sequence, whichever
 * call lands first). Before the workflow returns or continues as new, `await publisher.flushed()`.
 *
 *   const events = new EventPublisher();
 *   events.publish({ id: eventId(subscriptionId, seq), type: 'subscription.paused', ... });
 *   ...
 *   await events.flushed();
 *
 * Why at once (issue 16, seed 30a94ff344): an Update handler that publishes must issue the same
 * commands on replay as it did live. The publisher used to chain each event behind the previous one's
 * activity; an Update that found the chain idle scheduled its activity before its own completion, one
 * that found it busy after. Replaying, Temporal may hand the workflow the Update before the previous
 * activity's result that it had seen first live, so the chain looked busy where it had been idle, the
 * commands came in another order, and the worker hit "Update machine does not handle this event:
 * ActivityTaskScheduled". Scheduling in the publishing code itself does not depend on what other
 * activities have done: the same command in the same place, live or replayed. Runs that began with
 * the chain keep it (`patched`), so their histories still replay.
 */
import * as wf from '@temporalio/workflow';
import type { EventPublishingActivities } from '../activities/event-activities';
import type { PaysagaEvent } from '../common/events';

/** What publishing needs: a quick write, retried until the store takes it. */
export const EVENT_PUBLISHING_OPTIONS: wf.ActivityOptions = {
  startToCloseTimeout: '10s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1 minute' },
};

/** Marks runs that schedule each publication in place (see above). */
export const PUBLISH_IN_PLACE_PATCH = 'events-published-in-place';

export class EventPublisher {
  private readonly acts: EventPublishingActivities;
  private readonly inPlace: boolean;
  /** Published, not confirmed stored yet: each call carries them all, in order. */
  private unconfirmed: PaysagaEvent[] = [];
  private sending = 0;
  /** Runs recorded before PUBLISH_IN_PLACE_PATCH: one activity after the other. */
  private chain: Promise<void> = Promise.resolve();

  constructor(options: wf.ActivityOptions = EVENT_PUBLISHING_OPTIONS) {
    this.acts = wf.proxyActivities<EventPublishingActivities>(options);
    this.inPlace = wf.patched(PUBLISH_IN_PLACE_PATCH);
  }

  /** Sends `event`; never throws and never fails the workflow (an invalid event is logged, not stored). */
  publish(event: PaysagaEvent): void {
    if (!this.inPlace) {
      this.chain = this.chain.then(() =>
        this.acts.publishEvent(event).catch((err) => notPublished([event], err)),
      );
      return;
    }
    this.unconfirmed.push(event);
    const batch = [...this.unconfirmed];
    this.sending++;
    void this.acts
      .publishEvents(batch)
      .catch((err: unknown) => notPublished(batch, err))
      .finally(() => {
        // Stored (or given up as invalid): later calls need not carry them again.
        this.unconfirmed = this.unconfirmed.filter((e) => !batch.includes(e));
        this.sending--;
      });
  }

  /** Resolves once every event published so far has been stored (or refused as invalid). */
  async flushed(): Promise<void> {
    await this.chain;
    await wf.condition(() => this.sending === 0);
  }
}

function notPublished(events: PaysagaEvent[], err: unknown): void {
  wf.log.error('events not all published', {
    eventIds: events.map((e) => e.id),
    error: err instanceof wf.ActivityFailure ? (err.cause?.message ?? err.message) : String(err),
  });
}
