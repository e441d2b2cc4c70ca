/**
 * The quiet period of a session's changes on the way (patches `held-status` and `held-record`). A phase
 * the session moves through by itself (its own automatic approval, the provider at work) is usually
 * replaced within a fraction of a second; showing it (a search-attribute upsert) or recording it (a local
 * activity, a store transaction and a marker) costs more than waiting to see whether it lasts. What
 * someone must see at once (a final phase, a wait for the payer or a person, attention, an Update's
 * answer) ends the wait.
 *
 * Everything that waits shares one wait: one timer, started by the first part that waits and canceled
 * by whatever ends it, however many parts (the search attributes, the record) hold a change.
 *
 *   const hold = new Hold(HOLD_MS, () => session.isFinal() || session.rules.waitsForSomeone());
 *   await hold.over();   // at once when urgent; else when urgent or after HOLD_MS
 */
import * as wf from '@temporalio/workflow';
import { ownTimers, type Waits } from './timer';

/** How long a phase on the way must hold before it is shown or recorded. */
export const HOLD_MS = 2_000;

export class Hold {
  private waiting?: Promise<void>;
  /** How many waits have ended: a part that may stop waiting earlier waits for the next one. */
  private ended = 0;

  constructor(
    readonly ms: number,
    /** Whatever must show now: a condition, so cheap (it runs on every activation). */
    readonly urgent: () => boolean,
    /** How the hold's timeout is kept (the session's shared timer in runs patched `shared-timer`). */
    private readonly waits: Waits = ownTimers,
  ) {}

  /**
   * Resolves once what is pending now may show: at once when urgent, else when urgent or after `ms`.
   * `unless` ends one part's wait early without ending the others' (the record asked for at once by an
   * Update's answer, while the search attributes keep holding a phase on the way).
   */
  over(unless?: () => boolean): Promise<void> {
    if (this.urgent() || unless?.()) return Promise.resolve();
    this.waiting ??= this.waits.condition(this.urgent, this.ms).then(() => {
      this.waiting = undefined;
      this.ended++;
    });
    if (!unless) return this.waiting;
    const ended = this.ended;
    // No timeout of its own: the shared wait ends it at the latest.
    return wf.condition(() => this.ended !== ended || unless());
  }
}
