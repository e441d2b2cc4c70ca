/**
 * The attention a session or a subscription shows (common/reasons.ts ATTENTION_CODES): raised once per
 * reason (the same reason again changes nothing, so a call that keeps failing writes no new record),
 * cleared once (`import * as attention`: attention.raise, attention.clear). Each holder says what else a change means (a session's phase, log and events; a
 * subscription's record): these rules are the part both share.
 */
import { sameReason, type AttentionReason } from '../common/reasons';
import type { Attention } from '../common/views';
import { iso } from './iso';

export interface AttentionHolder {
  attention?: Attention;
}

/**
 * Shows `reason` unless it is the one shown. `first` when nothing was shown (the NeedsAttention search
 * attribute turns on), `changed` when another reason was, undefined when this very one is.
 */
export function raise(
  holder: AttentionHolder,
  reason: AttentionReason,
  now: number,
): 'first' | 'changed' | undefined {
  if (is(holder, reason)) return undefined;
  const first = holder.attention === undefined;
  holder.attention = { ...reason, since: iso(now) };
  return first ? 'first' : 'changed';
}

/** Whether the holder shows this very reason (every field the same). */
export function is(holder: AttentionHolder, reason: AttentionReason): boolean {
  return sameReason(holder.attention, reason);
}

/** Clears what is shown and returns it (undefined when nothing was: nothing to do). */
export function clear(holder: AttentionHolder): AttentionReason | undefined {
  if (!holder.attention) return undefined;
  const { since: _since, ...cleared } = holder.attention;
  delete holder.attention;
  return cleared;
}

/** Whether the holder shows attention for `code` (about `subject`, when one is given). */
export function isFor(holder: AttentionHolder, code: AttentionReason['code'], subject?: string): boolean {
  const a = holder.attention;
  return a?.code === code && (subject === undefined || a.subject === subject);
}
