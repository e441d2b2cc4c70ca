/**
 * The session's search attributes in Temporal (DESIGN decision 7): what an operator filters on in the UI.
 * Each upsert is a write to the server's visibility store besides the history (taking all of a
 * checkout's out made `bench sessions` a quarter faster: bench/RESULTS.md, stop 36), so a run patched
 * `lean-history` upserts a value only when it differs from the one shown, and waits while a provider
 * event is being verified: the verdict usually moves the phase again in the same workflow task (a 3-D
 * Secure checkout's start shows `processing` for a few milliseconds before `awaiting_approval`), and
 * only the value the task ends on is ever seen. Runs from before the patch upsert every change at
 * once, as they ran.
 *
 *   const visibility = new Visibility(lean, () => inbox.empty);
 *   visibility.set([{ key: PaymentStatus, value: 'succeeded' }]);
 *   visibility.flush();   // before the run ends or continues as new
 */
import type { SearchAttributeUpdatePair } from '@temporalio/common';
import * as wf from '@temporalio/workflow';

/** Marks runs that record one patch, prove provider events and show search attributes when settled. */
export const LEAN_HISTORY_PATCH = 'lean-history';

export class Visibility {
  /** Values set and not shown yet, by attribute name (the last one set wins). */
  private readonly pending = new Map<string, SearchAttributeUpdatePair>();

  constructor(
    private readonly lean: boolean,
    /** No provider event is waiting for its verdict. */
    private readonly quiet: () => boolean,
  ) {
    if (lean) void this.showWhenQuiet();
  }

  set(pairs: SearchAttributeUpdatePair[]): void {
    if (!this.lean) {
      wf.upsertSearchAttributes(pairs);
      return;
    }
    for (const pair of pairs) this.pending.set(pair.key.name, pair);
  }

  /** Shows what is pending now, whatever is being verified: the run is about to end. */
  flush(): void {
    const changed = [...this.pending.values()].filter((pair) => !shown(pair));
    this.pending.clear();
    if (changed.length > 0) wf.upsertSearchAttributes(changed);
  }

  private async showWhenQuiet(): Promise<void> {
    for (;;) {
      await wf.condition(() => this.pending.size > 0 && this.quiet());
      this.flush();
    }
  }
}

/** Whether the run already shows this value (the SDK keeps the start's attributes and every upsert). */
function shown({ key, value }: SearchAttributeUpdatePair): boolean {
  const current: unknown = wf.workflowInfo().typedSearchAttributes.get(key);
  if (current instanceof Date && value instanceof Date) return current.getTime() === value.getTime();
  if (Array.isArray(current) && Array.isArray(value))
    return current.length === value.length && current.every((v, i) => v === value[i]);
  return current === value;
}
