/**
 * Plain data of recurring billing (docs/billing.md): the subscription workflow's input and the state it
 * carries from one billing period to the next (each period is a run of its own: continue-as-new). The view
 * it answers is in views.ts. No card data: a subscription charges a recurring token.
 */
import type { BillingSchedule } from './billing-calendar';
import type { DeclineClass } from './billing-policy';
import type { SubscriptionStatus } from './kinds';
import type { EndReason } from './reasons';
import type { SessionSettings } from './settings';
import type {
  Attention,
  BillingPeriodView,
  BillingPolicy,
  ChargeRecord,
  DunningPolicy,
  DunningState,
  Money,
  SubscriptionTotals,
} from './views';

const DAY = 24 * 3_600_000;

/** Bounds the workflow's validators and the client's zod inputs share. */
export const SUBSCRIPTION_LIMITS = {
  maxTokenLength: 256,
  /** An anchor, a trial's end or a paused subscription's resume date: at most this far ahead. */
  maxAheadMs: 2 * 366 * DAY,
  maxReasonLength: 500,
} as const;

/** A schedule as asked for: without an anchor, the subscription's start (or, in a change, its billing day);
 *  without a zone, UTC. */
export type ScheduleRequest = Omit<BillingSchedule, 'anchor' | 'timeZone'> & {
  anchor?: string;
  timeZone?: string;
};

/** A change accepted for a later period, applied when that period falls due. */
export interface PendingChange {
  fromPeriod: number;
  amount?: number;
  schedule?: BillingSchedule;
}

export interface SubscriptionInput {
  /** `sub-<reference>`: the workflow id (no provider session backs a subscription as a whole). */
  subscriptionId: string;
  reference: string;
  token: string;
  amount: Money;
  /** Due dates from the anchor, in the schedule's zone (common/billing-calendar.ts). */
  schedule: ScheduleRequest;
  /** Epoch ms: no charge before it (the first due date at or after it is the first charged). */
  trialEnd?: number;
  /** Ends (status `ended`) once this many periods are billed. */
  endAfterPeriods?: number;
  /** Epoch ms: ends before the first period due at or after it. */
  endAt?: number;
  dunning: DunningPolicy;
  policy: BillingPolicy;
  /**
   * The provider's test environment (the sandbox): periods under a day and delays under a minute are
   * allowed. Off for production: a real charge every few seconds is never a plan.
   */
  testMode: boolean;
  /** Settings of every charge session (polling, deadlines). */
  settings: SessionSettings;
  /** The payer as the provider's user_info (required for a charge), sent with every charge. */
  customer: Record<string, unknown>;
  submerchantId?: string;
  /** The provider project its charges are signed for (PAYSAGA_PROJECTS); absent: the default. */
  projectId?: string;
}

/** A period of a subscription, as it carries it (and the view shows it). */
export type PeriodState = BillingPeriodView;

/** The charge in flight: which period, which attempt, and for what. */
export interface ChargeInFlight {
  period: number;
  attempt: number;
  kind: ChargeRecord['kind'];
  amount: Money;
  token: string;
  customer: Record<string, unknown>;
}

/** Everything a new run needs to carry on where the last one stopped. */
export interface SubscriptionState {
  status: SubscriptionStatus;
  amount: Money;
  token: string;
  /** The payer's details when changed since the start (else the input's). */
  customer?: Record<string, unknown>;
  /** The calendar schedule in effect: every due date is one of its dates. */
  schedule: BillingSchedule;
  /** Changes accepted for later periods, by period. */
  pendingChanges?: PendingChange[];
  /** The next period to fall due, from 1 (periods before it are taken: paid, owed, written off or open). */
  period: number;
  /** When `period` falls due (epoch ms). */
  periodDueAt: number;
  /** The due date of the period before `period` (the service period now running), once there was one. */
  lastDueAt?: number;
  /** The base price of the period before `period` (what proration compares a new price with). */
  lastPrice?: number;
  /** Proration carried into the next period taken (positive: charged, negative: credit). */
  credit: number;
  /** The period being charged or retried (status attempted), when one is. */
  open?: number;
  /** When the open period's next attempt is due (a dunning or provider-unavailable retry). */
  retryAt?: number;
  /** The wait before the next retry after a provider-unavailable result (doubles, to a day). */
  unavailableWaitMs?: number;
  /** The charge in flight (its record is the last of `charges`, outcome pending). */
  charging?: ChargeInFlight;
  /** When the last charge ended (epoch ms): spacing counts from it. */
  lastChargeEndedAt?: number;
  /** Owed periods queued for collection, in order. */
  collecting: number[];
  /** No collection before this (epoch ms): the provider could not decide the last one. */
  collectAfter?: number;
  /** Every period owed or open, and the latest others. */
  periods: PeriodState[];
  /** The latest charges (at most MAX_CHARGES_KEPT), oldest first; the last may be in flight. */
  charges: ChargeRecord[];
  totals: SubscriptionTotals;
  dunning?: DunningState;
  /** A hard decline: billing waits (past_due) for a new token and a resume. */
  paymentMethodRequired?: boolean;
  /** Paused with a resume date (epoch ms). */
  pausedUntil?: number;
  cancelation?: { atPeriodEnd: boolean; requestedAt: number; effectiveAt?: number; reason?: EndReason };
  attention?: Attention;
  canceledReason?: EndReason;
  /** Outbound events emitted so far (the next one's sequence is this + 1). */
  eventSequence: number;
  /** How many runs came before this one (continue-as-new count). */
  runs: number;
  createdAt: string;
  /** The version of the last record written to the store (grows with every change). */
  recordVersion?: number;
}

export type { DeclineClass };
