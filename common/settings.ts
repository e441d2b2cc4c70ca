/**
 * How a session behaves: the partner's decision policies, polling, and deadlines. The defaults, the bounds
 * the API accepts (so that no setting can push a workflow past Temporal's history limits: every long wait
 * also continues-as-new), and the merge of per-session overrides. Safe for workflow code.
 */

/** Who approves an operation, and who finalizes a hold (and whether partially). */
export const APPROVAL_MODES = ['auto', 'manual'] as const;
export const FINALIZATION_MODES = ['auto', 'auto_partial', 'manual'] as const;

export type ApprovalPolicy = { mode: 'auto' } | { mode: 'manual'; deadlineMs: number };

export type FinalizationPolicy =
  { mode: 'auto' } | { mode: 'auto_partial'; amount: number } | { mode: 'manual'; deadlineMs: number };

/** When webhooks are on, polling starts only once an expected event is `lateAfterMs` late. */
export interface PollingPolicy {
  webhooks: boolean;
  lateAfterMs: number;
  initialMs: number;
  /** The cap of every backoff: polls, and calls retried while the provider is unreachable. */
  maxMs: number;
  factor: number;
  /**
   * The cap of the looks' backoff while the payer acts (3-D Secure, the bank app, the payment form): a
   * person is not late by the minute, and their return or the webhook tells at once. When not given,
   * `PAYER_LOOK_FACTOR` times `maxMs` (so a policy that shortens `maxMs` shortens this too).
   */
  payerMaxMs?: number;
}

/** How much longer the looks may be spaced while a payer acts than `maxMs`, unless `payerMaxMs` says. */
const PAYER_LOOK_FACTOR = 4;

/**
 * The wait after a look at the provider's state that found nothing new: backed off from the wait before,
 * within [initialMs, cap] (`maxMs` unless the wait is a payer's). Such a look proves no webhook was lost,
 * so the next is never sooner.
 */
export function nextPollWait(wait: number, polling: PollingPolicy, cap = polling.maxMs): number {
  return Math.min(Math.max(wait * polling.factor, polling.initialMs), cap);
}

/** The cap of the looks while the payer acts (see `payerMaxMs`). */
export function payerLookCap(polling: PollingPolicy): number {
  return polling.payerMaxMs ?? PAYER_LOOK_FACTOR * polling.maxMs;
}

export interface Deadlines {
  /** How long the payer has for 3-D Secure, the bank app or the payment form. */
  payerActionMs: number;
  /** How long the whole session may take before what can be canceled is canceled. */
  sessionMs: number;
  /** Card data sent by the starter: how long to wait for it before the session is given up. */
  startMs: number;
}

export interface SessionSettings {
  approval: ApprovalPolicy;
  finalization: FinalizationPolicy;
  polling: PollingPolicy;
  deadlines: Deadlines;
  /**
   * How long the session's workflow keeps following it after its result (refunds, chargebacks, a
   * provider re-read every `recheckMs`) before it closes; a later change opens it again.
   */
  followMs: number;
  /** While following a finished session: how often the provider's state is read again. */
  recheckMs: number;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** Defaults for production-like timing; tests and the demo pass shorter ones. */
export const DEFAULT_SETTINGS: SessionSettings = {
  approval: { mode: 'auto' },
  finalization: { mode: 'auto' },
  polling: { webhooks: true, lateAfterMs: 30_000, initialMs: 2_000, maxMs: MINUTE, factor: 2 },
  deadlines: { payerActionMs: 15 * MINUTE, sessionMs: DAY, startMs: 5 * MINUTE },
  followMs: 3 * DAY,
  recheckMs: DAY,
};

/**
 * What the API and the client accept. Polls no closer than 200 ms and backoffs capped within an hour keep
 * a session's history to a few events a minute at worst; deadlines stay within what a payment session
 * can mean (a hold is released long before 30 days).
 */
export const SETTINGS_BOUNDS = {
  decisionDeadlineMs: { min: 1_000, max: 7 * DAY },
  pollMs: { min: 200, max: HOUR },
  factor: { min: 1, max: 10 },
  payerActionMs: { min: 1_000, max: DAY },
  sessionMs: { min: 5_000, max: 30 * DAY },
  startMs: { min: 1_000, max: HOUR },
  followMs: { min: 0, max: 90 * DAY },
  recheckMs: { min: 1_000, max: 30 * DAY },
} as const;

export interface SettingsOverrides {
  approval?: ApprovalPolicy;
  finalization?: FinalizationPolicy;
  polling?: Partial<PollingPolicy>;
  deadlines?: Partial<Deadlines>;
  followMs?: number;
  recheckMs?: number;
}

export function mergeSettings(base: SessionSettings, o: SettingsOverrides = {}): SessionSettings {
  return {
    approval: o.approval ?? base.approval,
    finalization: o.finalization ?? base.finalization,
    polling: { ...base.polling, ...o.polling },
    deadlines: { ...base.deadlines, ...o.deadlines },
    followMs: o.followMs ?? base.followMs,
    recheckMs: o.recheckMs ?? base.recheckMs,
  };
}
