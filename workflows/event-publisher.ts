/**
 * Kept for subscription runs recorded before subscriptions were recorded in the store
 * (workflows/subscription-recorder.ts): they publish their events one after the other through the
 * `publishEvent` activity, and must go on doing so to replay. New runs never use it.
 *
 * Why it was replaced (issue 16, seed 30a94ff344): `publish` queues each activity behind the previous
 * one. An Update handler that publishes found the chain idle (its activity scheduled before the Update's
 * completion) or busy (after it); replaying, Temporal may hand the workflow the Update before the result
 * of the previous activity that it had seen first live, so the commands came in another order and a
 * worker without the workflow in its cache failed with "Update machine does not handle this event:
 * ActivityTaskScheduled".
 */
import * as wf from '@temporalio/workflow';
import type { EventPublishingActivities } from '../activities/event-activities';
import type { PaysagaEvent } from '../common/events';

/** What publishing needs: a quick signal, retried until Temporal takes it. */
export const EVENT_PUBLISHING_OPTIONS: wf.ActivityOptions = {
  startToCloseTimeout: '10s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1 minute' },
};

export class EventPublisher {
  private chain: Promise<void> = Promise.resolve();
  private readonly acts: EventPublishingActivities;

  constructor(options: wf.ActivityOptions = EVENT_PUBLISHING_OPTIONS) {
    this.acts = wf.proxyActivities<EventPublishingActivities>(options);
  }

  /** Queues `event`; never throws and never fails the workflow (an invalid event is logged, not sent). */
  publish(event: PaysagaEvent): void {
    this.chain = this.chain.then(() =>
      this.acts.publishEvent(event).catch((err: unknown) => {
        wf.log.error('event not published', {
          eventId: event.id,
          error: err instanceof wf.ActivityFailure ? (err.cause?.message ?? err.message) : String(err),
        });
      }),
    );
  }

  /** Resolves once every event published so far has been handed to its outbox. */
  flushed(): Promise<void> {
    return this.chain;
  }
}
