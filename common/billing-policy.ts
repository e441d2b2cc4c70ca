/**
 * The policies of recurring billing (docs/billing.md): how a failed charge is classed and retried, what
 * becomes of a period nobody paid, what happens when several periods fell due at once, and how a change
 * in the middle of a period is billed. Plain data and pure functions, shared by the client's validation,
 * the API's document and the subscription workflow.
 */
import type { Reason } from './reasons';

/** How a failed charge is read: decides whether, and when, it is tried again. */
export const DECLINE_CLASSES = ['hard', 'soft', 'unavailable'] as const;
export type DeclineClass = (typeof DECLINE_CLASSES)[number];

/** What becomes of a period that stays unpaid after its retries (an owed period). */
export const OWED_POLICIES = ['collect_with_next', 'leave_open', 'write_off'] as const;
export type OwedPolicy = (typeof OWED_POLICIES)[number];

/** Several periods due at once (after downtime, or a retry that ended late). */
export const CATCH_UP_POLICIES = ['one', 'all'] as const;
export type CatchUpPolicy = (typeof CATCH_UP_POLICIES)[number];

/** A change of amount or schedule in the middle of a period. */
export const PRORATION_POLICIES = ['none', 'next_invoice'] as const;
export type ProrationPolicy = (typeof PRORATION_POLICIES)[number];

/** What the subscription does once a period's soft-decline retries are spent. */
export const ON_EXHAUSTED = ['cancel', 'pause', 'continue'] as const;
export type OnExhausted = (typeof ON_EXHAUSTED)[number];

export const PERIOD_STATUSES = ['due', 'attempted', 'paid', 'owed', 'written_off'] as const;
export type PeriodStatus = (typeof PERIOD_STATUSES)[number];

export const CHARGE_KINDS = ['due', 'retry', 'collect'] as const;
export type ChargeKind = (typeof CHARGE_KINDS)[number];

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/**
 * The provider's error codes by class. Hard: the payment method will not pay (stolen, blocked, the token
 * disabled) or the request cannot succeed as sent: stop, owe the period, ask for a new payment method.
 * Soft: this time it did not pay (funds, a generic issuer decline): retry on the schedule. Unavailable:
 * the provider could not decide (its own error, or a refusal that is paysaga's configuration, not the
 * payer's): never a decline, tried again until it decides. A code in no list is `otherDeclines`.
 */
export const DEFAULT_DECLINE_CODES: Readonly<Record<DeclineClass, readonly string[]>> = {
  hard: ['fraud_suspected', 'recurring_token_inactive', 'invalid_request', 'repository_record_not_found'],
  soft: ['insufficient_funds', 'card_declined', 'session_cancelled'],
  unavailable: [
    'internal_error',
    'authentication_failed',
    'endpoint_not_found',
    'unsupported_media_type',
    'idempotency_key_not_supported',
    'idempotency_key_params_mismatch',
    'idempotency_key_already_exists',
  ],
};

export const BILLING_DEFAULTS = {
  /** Soft declines: retried after 1, 3 and 7 days. */
  retryDelaysMs: [DAY, 3 * DAY, 7 * DAY],
  onExhausted: 'cancel' as OnExhausted,
  otherDeclines: 'soft' as 'soft' | 'hard',
  unavailableRetryMs: HOUR,
  owed: 'collect_with_next' as OwedPolicy,
  catchUp: 'one' as CatchUpPolicy,
  proration: 'none' as ProrationPolicy,
  spacingMs: HOUR,
} as const;

export const BILLING_POLICY_LIMITS = {
  maxRetries: 10,
  /** A retry, a provider-unavailable wait or a spacing: at most this long. */
  maxDelayMs: 60 * DAY,
  /** Outside the provider's test environment, at least this long (no burst of real charges). */
  minDelayMs: 60_000,
  /** A provider-unavailable wait doubles up to this. */
  maxUnavailableWaitMs: DAY,
  maxCodes: 50,
  maxCodeLength: 64,
  /** Owed periods a subscription carries; reaching it stops billing (past_due) until they are settled. */
  maxOwed: 100,
} as const;

/** The codes of each class: the defaults, with the partner's lists moving a code to their class. */
export function declineCodes(
  overrides: Partial<Record<DeclineClass, readonly string[]>> = {},
): Record<DeclineClass, string[]> {
  const named = new Set(DECLINE_CLASSES.flatMap((c) => overrides[c] ?? []));
  const out = {} as Record<DeclineClass, string[]>;
  for (const c of DECLINE_CLASSES)
    out[c] = [
      ...new Set([...DEFAULT_DECLINE_CODES[c].filter((code) => !named.has(code)), ...(overrides[c] ?? [])]),
    ];
  return out;
}

/**
 * The class of a failed charge from its reason: the provider's error code, by the policy's lists. A failure
 * without a provider code (a session canceled or failed with nothing said) is `otherDeclines`.
 */
export function classify(
  why: Pick<Reason<string>, 'code' | 'providerCode'> | undefined,
  policy: { declineCodes: Record<DeclineClass, readonly string[]>; otherDeclines: 'hard' | 'soft' },
): DeclineClass {
  const code = why?.providerCode;
  if (code !== undefined)
    for (const c of DECLINE_CLASSES) if (policy.declineCodes[c].includes(code)) return c;
  return policy.otherDeclines;
}
