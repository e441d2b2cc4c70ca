/**
 * Plain data of recurring billing (DESIGN decision 8): the subscription workflow's input, the state
 * it carries across continue-as-new, and the view its query answers. No card data: a subscription
 * charges a recurring token.
 */
import type { Money, SessionSettings } from './types';

/** Bounds the workflow's validators and the client's zod inputs share. */
export const SUBSCRIPTION_LIMITS = {
  minIntervalMs: 1_000,
  maxIntervalMs: 366 * 24 * 3_600_000,
  maxRetries: 10,
  maxTokenLength: 256,
} as const;

export type SubscriptionStatus = 'active' | 'paused' | 'past_due' | 'canceled';

export interface DunningPolicy {
  /** After a failed charge, retry after each of these delays in turn (each retry is a new attempt). */
  retryDelaysMs: number[];
  /** When every retry failed: cancel the subscription, or stop charging as `past_due` until resumed. */
  onExhausted: 'cancel' | 'pause';
}

export interface SubscriptionInput {
  /** `sub-<reference>`: the workflow id (no provider session backs a subscription as a whole). */
  subscriptionId: string;
  reference: string;
  token: string;
  amount: Money;
  intervalMs: number;
  /** Epoch ms of the first charge; omitted: at once. */
  firstChargeAt?: number;
  dunning: DunningPolicy;
  /** Settings of every charge session (polling, deadlines). */
  settings: SessionSettings;
  /** The payer as the provider's user_info (required for a charge), sent with every charge's initiate. */
  customer: Record<string, unknown>;
  /** Continue-as-new after this many periods in one run (default 100). */
  periodsPerRun?: number;
}

export type ChargeOutcome = 'pending' | 'succeeded' | 'failed';

export interface ChargeRecord {
  period: number;
  attempt: number;
  /** The provider session of this attempt, also the child workflow's id. */
  sessionId: string;
  amount: number;
  currency: string;
  startedAt: string;
  outcome: ChargeOutcome;
  finishedAt?: string;
  reason?: string;
}

export interface DunningState {
  period: number;
  /** Failed attempts of this period so far. */
  failures: number;
  nextRetryAt?: string;
  lastReason?: string;
  /** Every retry failed: the subscription was canceled or is past_due. */
  exhausted: boolean;
}

export interface SubscriptionTotals {
  /** Charge attempts (sessions) made, all runs together. */
  attempts: number;
  succeeded: number;
  failed: number;
  /** Sum of successful charges, minor units (per the currency of the subscription). */
  chargedAmount: number;
}

/** Everything a new run (continue-as-new) needs to carry on where the last one stopped. */
export interface SubscriptionState {
  status: SubscriptionStatus;
  amount: Money;
  token: string;
  intervalMs: number;
  /** The period charged next (or being charged), from 1. */
  period: number;
  /** Attempt of that period (0 = the scheduled charge, 1.. = dunning retries). */
  attempt: number;
  /** When the current period fell or falls due (epoch ms): the schedule is anchored on it. */
  periodDueAt: number;
  /** When the next charge attempt happens (epoch ms): the due time, or a dunning retry. */
  nextChargeAt: number;
  /** The amount of the period being charged, fixed at its first attempt (retries charge the same). */
  periodAmount?: Money;
  /** The latest charges (at most MAX_CHARGES_KEPT), oldest first. */
  charges: ChargeRecord[];
  totals: SubscriptionTotals;
  dunning?: DunningState;
  canceledReason?: string;
  /** How many runs came before this one (continue-as-new count). */
  runs: number;
  createdAt: string;
}

export interface SubscriptionView {
  subscriptionId: string;
  reference: string;
  status: SubscriptionStatus;
  amount: Money;
  token: string;
  intervalMs: number;
  /** ISO time of the next charge attempt; absent when canceled. */
  nextChargeAt?: string;
  period: number;
  charges: ChargeRecord[];
  totals: SubscriptionTotals;
  dunning?: DunningState;
  dunningPolicy: DunningPolicy;
  canceledReason?: string;
  /** Continue-as-new count: 0 in the first run. */
  runs: number;
  createdAt: string;
}

export interface SubscriptionChange {
  /** New amount in minor units (currency stays). */
  amount?: number;
  token?: string;
  intervalMs?: number;
}
