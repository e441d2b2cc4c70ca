/**
 * Reasons as runs and records from before structured reasons wrote them: `"code: words"` strings (a bare
 * provider error code for the provider's failures). A run continued as new, a closed run's result, a
 * store row or a session's signal may still carry one; they are read into reasons here, and only here:
 * nothing else in paysaga reads a reason's words. A string read here equals the reason today's code makes
 * for the same cause (sameReason), so a carried attention is not raised twice when a run replays.
 */
import type { SessionState } from './session-input';
import { ATTENTION_CODES, END_REASON_CODES, reason, type AttentionReason, type EndReason } from './reasons';

const END_CODES: ReadonlySet<string> = new Set(END_REASON_CODES);
const ATTENTION: ReadonlySet<string> = new Set(ATTENTION_CODES);
/** Codes whose words began with the provider's error code: `start_failed: invalid_request: ...`. */
const PROVIDER_FIRST: ReadonlySet<string> = new Set(['start_failed', 'public_token_refused']);

/** `head: words` split at the first `": "` (words undefined when there is none). */
function split(text: string): [string, string | undefined] {
  const at = text.indexOf(': ');
  return at < 0 ? [text, undefined] : [text.slice(0, at), text.slice(at + 2)];
}

/**
 * An end reason, from a reason or an earlier run's string. A string that names no code is read by
 * `otherwise` (what the field held: a provider's error code, a refusal's message, the partner's words).
 */
export function readEndReason(
  value: EndReason | string | undefined,
  otherwise: (text: string) => EndReason = providerError,
): EndReason | undefined {
  if (value === undefined || typeof value !== 'string') return value;
  if (value === 'charge failed') return reason('charge_failed');
  if (value === 'charge canceled') return reason('charge_canceled');
  const [head, words] = split(value);
  if (!END_CODES.has(head)) return otherwise(value);
  const code = head as EndReason['code'];
  if (head === 'identity_check_failed') return reason(code, undefined, { providerCode: words });
  if (PROVIDER_FIRST.has(head) && words !== undefined) {
    const [providerCode, description] = split(words);
    return reason(code, description, { providerCode });
  }
  return reason(code, words);
}

/** An attention, from a reason or an earlier run's string (`transaction/state: ...`, `refund R1: ...`). */
export function readAttention(value: AttentionReason | string): AttentionReason {
  if (typeof value !== 'string') return value;
  const [head, words] = split(value);
  if (ATTENTION.has(head)) return reason(head as AttentionReason['code'], words);
  const about = head.split(' ');
  if (about.length === 2 && about[0] === 'refund')
    return reason('refund_pending', words, { subject: about[1] });
  if (about.length === 2 && about[0] === 'charge' && words === 'the provider session is not open yet')
    return reason('charge_not_open', words, { subject: about[1] });
  // A provider call's name (`transaction/state`), or a charge's session (`charge ps_...`).
  const subject = about.length === 2 && about[0] === 'charge' ? about[1] : head;
  return reason('provider_call_failing', words, { subject });
}

/** A provider's bare error code (what a failed session's reason was): the provider's error. */
function providerError(text: string): EndReason {
  return text.includes(' ')
    ? reason('provider_error', text)
    : reason('provider_error', undefined, { providerCode: text });
}

/** A refund's reason: the provider's refusal, as its message said. */
export const refundRefusal = (text: string): EndReason => reason('refund_refused', text);

/** An attention as a session or subscription carries it, its reason read. */
export function readAttentionState<T extends { since: string }>(
  value: (T & AttentionReason) | (T & { reason: string }) | undefined,
): (AttentionReason & { since: string }) | undefined {
  if (value === undefined) return undefined;
  if (!('reason' in value) || typeof value.reason !== 'string')
    return value as AttentionReason & { since: string };
  return { ...readAttention(value.reason), since: value.since };
}

/** A carried session state with every reason read (a run continued or reopened from an earlier one). */
export function upgradeSessionReasons(state: SessionState): SessionState {
  const legacy = state as unknown as LegacyReasons;
  const final = state.final
    ? { ...state.final, ...optional('reason', readEndReason(legacy.final?.reason)) }
    : undefined;
  const upgraded: SessionState = {
    ...state,
    ...(final ? { final } : {}),
    ...optional('reason', readEndReason(legacy.reason)),
    ...optional('attention', readAttentionState(legacy.attention)),
    refunds: state.refunds.map((r) => ({
      ...r,
      ...optional('reason', readEndReason(legacyOf(r.reason), refundRefusal)),
    })),
    ...(state.payouts
      ? {
          payouts: state.payouts.map((o) => ({
            ...o,
            ...optional('reason', readEndReason(legacyOf(o.reason))),
          })),
        }
      : {}),
  };
  return upgraded;
}

/** A field typed as a reason that an earlier run may have written as a string. */
const legacyOf = (value: EndReason | undefined): EndReason | string | undefined => value;

interface LegacyReasons {
  reason?: string | EndReason;
  final?: { reason?: string | EndReason };
  attention?: ({ since: string } & AttentionReason) | { since: string; reason: string };
}

/** `{ [key]: value }` when the value is set, else nothing (state and views carry no `undefined`). */
function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}
