/**
 * The partner's decision being carried out (approve, cancel, finalize: Updates): one at a time, named
 * while in progress so that the process waits for it and a second one is refused, and counted while
 * handlers work, so that a provider call made for one never continues the workflow as new midway
 * (runtime.ts).
 */
import * as wf from '@temporalio/workflow';
import type { SessionJournal } from './journal';

export class DecisionSlot {
  /** The decision being carried out, if any. */
  private current: string | undefined;
  /** Update handlers at work (see run). */
  running = 0;

  constructor(private readonly journal: SessionJournal) {}

  get inProgress(): string | undefined {
    return this.current;
  }

  begin(kind: string): void {
    this.current = kind;
    this.journal.log('decision', kind);
  }

  end(): void {
    this.current = undefined;
    this.journal.touch();
  }

  /** Runs an Update's work (its provider calls never continue the workflow as new midway). */
  async run<T>(work: () => Promise<T>): Promise<T> {
    this.running++;
    try {
      return await work();
    } finally {
      this.running--;
    }
  }

  /** Waits for a decision in flight to finish. */
  async finished(): Promise<void> {
    await wf.condition(() => this.current === undefined);
  }
}
