/**
 * Why something ended other than successfully, and why a session or subscription needs attention: a code
 * from a closed list that a backend can switch on, and words for people (`detail`). The provider's own
 * error code, where it is the cause, is `providerCode` (Stripe's `decline_code` beside its `code`); what
 * an attention is about, where a later step must find it again (a provider call, a refund, a charge), is
 * `subject`. Code compares these fields, never the words.
 */

/** Why a session, a payout, a refund, a charge or a subscription ended other than successfully. */
export const END_REASON_CODES = [
  /** The provider ended the operation with an error (`providerCode`: its error_code). */
  'provider_error',
  /** The provider refused the call that starts the operation (`providerCode`, `detail`). */
  'start_failed',
  /** A session started by its starter whose card data never came. */
  'not_started',
  /** The provider refused the widget's public token (`providerCode`, `detail`). */
  'public_token_refused',
  /** The provider made the widget's token but its answer was lost: no payer could use it. */
  'payment_form_token_lost',
  'payer_did_not_use_the_payment_form',
  /** The partner canceled (`detail`: the partner's words, when given). */
  'canceled_by_partner',
  /** No approve or finalize decision came before its deadline: paysaga canceled. */
  'decision_deadline',
  /** The provider refused paysaga's automatic approve: paysaga canceled. */
  'approve_refused',
  /** The provider refused paysaga's automatic finalize: paysaga released the hold. */
  'finalize_refused',
  /** The provider's amount or currency is not what was asked: never approved or finalized. */
  'amount_mismatch',
  /** The session deadline passed: paysaga canceled what could be canceled. */
  'session_deadline',
  /** Identity check: the phone number is not registered in FPS. */
  'recipient_not_registered',
  /** Identity check: the provider ended it with another error (`providerCode`). */
  'identity_check_failed',
  /** Every payout of the session ended and none paid out (`detail`: each one's reason). */
  'payouts_unsuccessful',
  /** The provider refused a refund (`providerCode`, `detail`). */
  'refund_refused',
  /** A subscription's charge: its session could not be opened (`detail`). */
  'charge_refused',
  /** A subscription's charge whose session failed without a reason of its own. */
  'charge_failed',
  /** A subscription's charge whose session was canceled without a reason of its own. */
  'charge_canceled',
  /** A subscription canceled because a period stayed unpaid after every dunning retry. */
  'past_due',
] as const;
export type EndReasonCode = (typeof END_REASON_CODES)[number];

/** What paysaga could not do yet and keeps trying (the session or subscription shows it until solved). */
export const ATTENTION_CODES = [
  /** A provider call failed past its retries and is tried again (`subject`: the call, or a charge's session). */
  'provider_call_failing',
  /** The provider's amount or currency is not what was asked. */
  'amount_mismatch',
  /** After the result, the provider shows another final state (the result stands; `detail` says which). */
  'drift',
  /** A refund is still processing at the provider past the session deadline (`subject`: its reference). */
  'refund_pending',
  /** Past the session deadline, the provider's operation has not ended and could not be canceled. */
  'session_deadline',
  /** A binding the provider reported successful without a recurring token. */
  'binding_without_token',
  /** The widget's token was made but its answer was lost: no payer can use it. */
  'payment_form_token_lost',
  /** A subscription's charge whose provider session is not open yet (`subject`: the charge's reference). */
  'charge_not_open',
] as const;
export type AttentionCode = (typeof ATTENTION_CODES)[number];

export interface Reason<C extends string = EndReasonCode> {
  code: C;
  /** Words for people: never matched by code. */
  detail?: string;
  /** The provider's error_code, where the provider's error is the cause. */
  providerCode?: string;
  /** What it is about (a provider call, a refund's reference, a charge's session or reference). */
  subject?: string;
}
export type EndReason = Reason<EndReasonCode>;
export type AttentionReason = Reason<AttentionCode>;

/** A reason, with only the fields that are set (state and views carry no `undefined`). */
export function reason<C extends string>(
  code: C,
  detail?: string,
  more: { providerCode?: string | undefined; subject?: string | undefined } = {},
): Reason<C> {
  return {
    code,
    ...(detail ? { detail } : {}),
    ...(more.providerCode ? { providerCode: more.providerCode } : {}),
    ...(more.subject ? { subject: more.subject } : {}),
  };
}

/** The same reason: every field equal (what the string reasons of earlier runs compared). */
export function sameReason(a: Reason<string> | undefined, b: Reason<string> | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return (
    a.code === b.code && a.detail === b.detail && a.providerCode === b.providerCode && a.subject === b.subject
  );
}

/** One line for logs and the session's event log: `code (subject, providerCode): detail`. */
export function reasonText(r: Reason<string>): string {
  const about = [r.subject, r.providerCode].filter((x) => x !== undefined);
  return `${r.code}${about.length ? ` (${about.join(', ')})` : ''}${r.detail ? `: ${r.detail}` : ''}`;
}

/** A reason whose cause is the provider's refusal of a call: its error code and description. */
export function refusalReason<C extends string>(
  code: C,
  refusal: { errorCode: string; description: string },
): Reason<C> {
  return reason(code, refusal.description, { providerCode: refusal.errorCode });
}
