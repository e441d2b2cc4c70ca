/**
 * Writes a session's record to the store (DESIGN decision 15): after every activation that changed the
 * session, one local activity writes its state (forward only by version), the operations, the provider
 * events received and the outbound events announced since the last write, in one transaction. Writes
 * never overlap; changes made while one is under way go in the next. A store that is down only delays
 * the write (retried without end); the process goes on meanwhile.
 *
 *   const recorder = new SessionRecorder(() => ({ state, view }));
 *   recorder.announce(event);      // goes out with the next write
 *   await recorder.flushed();      // before the run ends or continues as new
 */
import * as wf from '@temporalio/workflow';
import type { StoreActivities, SessionRecord } from '../activities/store-activities';
import type { PaysagaEvent } from '../common/events';
import type { SessionState } from '../common/session-input';
import type { SessionView } from '../common/views';
import { LocalLane } from './local-lane';

const store = wf.proxyLocalActivities<StoreActivities>({
  startToCloseTimeout: '15s',
  retry: { initialInterval: '200ms', backoffCoefficient: 2, maximumInterval: '15s' },
});

export interface Recorded {
  state: SessionState;
  view: SessionView;
}

export class SessionRecorder {
  private pending: PaysagaEvent[] = [];
  private writtenVersion = -1;
  private writing = false;

  constructor(
    private readonly source: () => Recorded,
    private readonly lane = new LocalLane(),
  ) {
    void this.run();
  }

  /** Queues an outbound event: stored (and so delivered) with the next write. */
  announce(event: PaysagaEvent): void {
    this.pending.push(event);
  }

  /** Resolves once every change and event so far is in the store. */
  async flushed(): Promise<void> {
    await wf.condition(() => !this.writing && !this.due());
  }

  private due(): boolean {
    return this.pending.length > 0 || this.source().state.version !== this.writtenVersion;
  }

  private async run(): Promise<void> {
    for (;;) {
      await wf.condition(() => this.due());
      this.writing = true;
      try {
        const { state, view } = this.source();
        const version = state.version;
        const events = this.pending.splice(0);
        const audited = state.auditRecorded ?? 0;
        const total = state.auditCount ?? 0;
        const fresh = state.providerEvents.slice(
          Math.max(0, state.providerEvents.length - (total - audited)),
        );
        const record: SessionRecord = {
          state,
          summary: {
            phase: view.phase,
            final: view.final,
            needsAttention: view.attention !== undefined,
            ...(view.request.money
              ? {
                  amount: state.finalizeAmount ?? view.request.money.amount,
                  currency: view.request.money.currency,
                }
              : {}),
            ...(state.request.customerId ? { customerId: state.request.customerId } : {}),
            createdAt: view.createdAt,
            ...(view.finalAt ? { finalAt: view.finalAt } : {}),
          },
          operations: view.operations,
          audit: fresh.map((e, i) => ({ ...e, seq: total - fresh.length + i + 1 })),
          events,
        };
        await this.lane.run(() => store.recordSession(record));
        state.auditRecorded = Math.max(state.auditRecorded ?? 0, total);
        this.writtenVersion = version;
      } finally {
        this.writing = false;
      }
    }
  }
}
