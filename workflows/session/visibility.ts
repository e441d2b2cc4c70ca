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
 * Runs patched `held-status` also show a phase the session moves through by itself (its own call or the
 * provider at work) only once it has held for HOLD_MS: a card checkout goes through `awaiting_approval`
 * (approved automatically) and `processing` within a fraction of a second, and two upserts nobody could
 * have looked at cost more than the timer that holds them back (started, then canceled by the result).
 * What an operator must see at once shows at once: a final phase, a wait for someone (the payer, a
 * manual decision), `needs_attention` and the attention flag. The wait is the session's `Hold`
 * (session/hold.ts); in runs patched `held-record` the record's writes wait on the same one.
 *
 *   const visibility = new Visibility(lean, () => inbox.empty, new Hold(HOLD_MS, () => urgent));
 *   visibility.set([{ key: PaymentStatus, value: 'succeeded' }]);
 *   visibility.flush();   // before the run ends or continues as new
 */
import type { SearchAttributeUpdatePair } from '@temporalio/common';
import * as wf from '@temporalio/workflow';
import { isFinalPhase, type SessionPhase } from '../../common/kinds';
import { NeedsAttention, PaymentStatus } from '../../common/search-attributes';
import type { Hold } from './hold';

/** Marks runs that record one patch, prove provider events and show search attributes when settled. */
export const LEAN_HISTORY_PATCH = 'lean-history';

/**
 * Marks runs that show a phase on the way once it has held (and stands for `write-after-verdict`,
 * workflows/session-recorder.ts, and so for `lean-history`).
 */
export const HELD_STATUS_PATCH = 'held-status';

export class Visibility {
  /** Values set and not shown yet, by attribute name (the last one set wins). */
  private readonly pending = new Map<string, SearchAttributeUpdatePair>();

  constructor(
    private readonly lean: boolean,
    /** No provider event is waiting for its verdict. */
    private readonly quiet: () => boolean,
    /** Runs patched `held-status`: the wait of a phase on the way (its urgency includes `urgent()`). */
    private readonly hold?: Hold,
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
    const { hold } = this;
    for (;;) {
      await wf.condition(() => this.pending.size > 0 && this.quiet());
      // What is set meanwhile replaces what waits; what must show at once ends the hold.
      await hold?.over();
      this.flush();
    }
  }

  /** What an operator must see at once, besides the session's own urgency: needs_attention, the flag. */
  urgent(): boolean {
    if (this.pending.has(NeedsAttention.name)) return true;
    const status = this.pending.get(PaymentStatus.name)?.value;
    return status === 'needs_attention' || isFinalPhase(status as SessionPhase);
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
