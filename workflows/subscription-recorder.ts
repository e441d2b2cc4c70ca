/**
 * Records a subscription in the store (docs/decisions/015-paysaga-remembers.md): every change the workflow makes is written
 * by the `recordSubscription` activity with a version that only grows (carried across runs in the
 * state), the subscription's view, its charges and its events in one transaction. The store keeps the
 * newest version whatever order the writes land in; each write carries every event not confirmed
 * stored yet, in order, so a subscription's events enter the feed in sequence.
 *
 *   const recorder = new SubscriptionRecorder(() => view, state);
 *   recorder.record(event);      // after a change (with the event it announces, if any)
 *   await recorder.flushed();    // before the run ends or continues as new
 *   await recorder.flushed(ms);  // before an Update answers (a store that is down only delays it)
 *
 * The activity is scheduled right where the change is made, even inside an Update handler: the same
 * command in the same place live and on replay, whatever other activities have done meanwhile (a queue
 * behind earlier activities would put an Update's command after an activity's result on one run and
 * before it on another, which does not replay).
 */
import * as wf from '@temporalio/workflow';
import type { StoreActivities } from '../activities/store-activities';
import type { PaysagaEvent } from '../common/events';
import type { SubscriptionView } from '../common/views';

/** Retried until the store takes it: a store that is down delays the record, never the billing. */
const store = wf.proxyActivities<StoreActivities>({
  startToCloseTimeout: '15s',
  retry: { initialInterval: '200ms', backoffCoefficient: 2, maximumInterval: '15s' },
});

export class SubscriptionRecorder {
  /** Announced, not confirmed stored yet: each write carries them all, in order. */
  private unconfirmed: PaysagaEvent[] = [];
  private writing = 0;

  constructor(
    private readonly source: () => { view: SubscriptionView; customerId?: string },
    private readonly versioned: { recordVersion?: number },
  ) {}

  /** Writes the subscription as it is now, with `event` (and any earlier one not confirmed yet). */
  record(event?: PaysagaEvent): void {
    if (event) this.unconfirmed.push(event);
    const version = (this.versioned.recordVersion = (this.versioned.recordVersion ?? 0) + 1);
    const events = [...this.unconfirmed];
    this.writing++;
    void store
      .recordSubscription({ ...this.source(), version, events })
      .catch((err: unknown) =>
        wf.log.error('subscription not recorded', {
          version,
          error: err instanceof wf.ActivityFailure ? (err.cause?.message ?? err.message) : String(err),
        }),
      )
      .finally(() => {
        this.unconfirmed = this.unconfirmed.filter((e) => !events.includes(e));
        this.writing--;
      });
  }

  /** Resolves once every change recorded so far is in the store (or after `withinMs`, when given). */
  async flushed(withinMs?: number): Promise<void> {
    if (withinMs === undefined) await wf.condition(() => this.writing === 0);
    else await wf.condition(() => this.writing === 0, withinMs);
  }
}
