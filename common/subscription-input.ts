/**
 * Plain data of recurring billing (DESIGN decision 8): the subscription workflow's input and the state it
 * carries across continue-as-new. The view it answers is in views.ts. No card data: a subscription charges
 * a recurring token.
 */
import type { BillingSchedule } from './billing-calendar';
import type { SubscriptionStatus } from './kinds';
import type { EndReason } from './reasons';
import type { SessionSettings } from './settings';
import type {
  Attention,
  ChargeRecord,
  DunningPolicy,
  DunningState,
  Money,
  SubscriptionTotals,
} from './views';

/** Bounds the workflow's validators and the client's zod inputs share. */
export const SUBSCRIPTION_LIMITS = {
  minIntervalMs: 1_000,
  maxIntervalMs: 366 * 24 * 3_600_000,
  maxRetries: 10,
  maxTokenLength: 256,
} as const;

/** A schedule as asked for: without an anchor, the subscription's start (or, in a change, its billing day). */
export type ScheduleRequest = Omit<BillingSchedule, 'anchor'> & { anchor?: string };

/** A change accepted for a later period, applied when that period begins. */
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
  /** Calendar billing: due dates from the anchor (common/billing-calendar.ts). */
  schedule?: ScheduleRequest;
  /** Fixed milliseconds between charges, for subscriptions without a schedule (the older input). */
  intervalMs?: number;
  /** Epoch ms of the first charge (intervalMs only; a schedule has its anchor); omitted: at once. */
  firstChargeAt?: number;
  /** Epoch ms: no charge before it (the first due date at or after it is the first charged). */
  trialEnd?: number;
  /** Ends (status `ended`) once this many periods are billed. */
  endAfterPeriods?: number;
  /** Epoch ms: ends before the first period due at or after it. */
  endAt?: number;
  dunning: DunningPolicy;
  /** Settings of every charge session (polling, deadlines). */
  settings: SessionSettings;
  /** The payer as the provider's user_info (required for a charge), sent with every charge's initiate. */
  customer: Record<string, unknown>;
  submerchantId?: string;
  /** The provider project its charges are signed for (PAYSAGA_PROJECTS); absent: the default. */
  projectId?: string;
  /** Continue-as-new after this many periods in one run (default 100). */
  periodsPerRun?: number;
  /** How long the reference of each charge is kept by paysaga (default: as for any session). */
  keepReferencesMs?: number;
}

/** Everything a new run (continue-as-new) needs to carry on where the last one stopped. */
export interface SubscriptionState {
  status: SubscriptionStatus;
  amount: Money;
  token: string;
  /** Fixed milliseconds between charges (subscriptions without a schedule). */
  intervalMs?: number;
  /** The calendar schedule in effect: the current period's due date is one of its dates. */
  schedule?: BillingSchedule;
  /** Changes accepted for later periods, by period. */
  pendingChanges?: PendingChange[];
  /** The due date of the period before the current one (epoch ms), once there was one. */
  lastDueAt?: number;
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
  /** The token of the attempt being charged (a change of token applies to the next attempt). */
  chargeToken?: string;
  /** The latest charges (at most MAX_CHARGES_KEPT), oldest first; the last may be in flight. */
  charges: ChargeRecord[];
  totals: SubscriptionTotals;
  dunning?: DunningState;
  attention?: Attention;
  canceledReason?: EndReason;
  /** Outbound events emitted so far (the next one's sequence is this + 1). */
  eventSequence: number;
  /** How many runs came before this one (continue-as-new count). */
  runs: number;
  createdAt: string;
  /** The version of the last record written to the store (grows with every change; runs before the
   *  store recorded subscriptions have none). */
  recordVersion?: number;
}
