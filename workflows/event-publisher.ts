/**
 * For session and subscription workflows: publish events without waiting for each, in the order
 * given. `publish` queues the `publishEvent` activity behind the previous one and returns at once, so
 * the saga goes on while the signal is sent; the outbox receives the events in order (it would also
 * reorder them by sequence, but holding back costs it a wait). Before the workflow returns or
 * continues as new, `await publisher.flushed()`: an activity still queued at that point is lost.
 *
 *   const events = new EventPublisher();
 *   events.publish({ id: eventId(sessionId, seq), type: 'session.succeeded', created, session_id, sequence: seq, data });
 *   ...
 *   await events.flushed();
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
