/**
 * Plain data that crosses into Temporal: the inputs of the session workflows and the state a session
 * carries from run to run (continue-as-new, or a new run after the last one closed). Nothing here may
 * ever hold card data (docs/decisions/002-card-data-never-enters-temporal.md).
 */
import type { ProviderRefusal } from './failures';
import type { SessionKind, SessionPhase } from './kinds';
import type { EndReason } from './reasons';
import type { SessionSettings } from './settings';
import type { Attention, Money, ProviderEventRecord, RefundView, SessionEvent } from './views';
import type {
  IdentityCheckRequest,
  InitCheckoutRequest,
  InitiateRequest,
  InitTransferRequest,
  SessionInfo,
  StartCheckoutRequest,
  WebhookEvent,
  StartTransferRequest,
} from '../provider/schemas';

/** The provider's session id (spec: `ps_<number>`): a payment session's workflow id; nothing else is one. */
export const SESSION_ID_PATTERN = /^ps_[0-9]{1,40}$/;

/** The start/checkout body the workflow sends (the session id is added by the activity). */
export type CheckoutStart = Omit<StartCheckoutRequest, 'session_id'>;
export type TransferStart = Omit<StartTransferRequest, 'session_id'>;

/** How the operation gets started at the provider. */
export type StartSpec =
  /** The workflow sends start/checkout itself (no card data in the body). */
  | { by: 'workflow'; operation: 'checkout'; body: CheckoutStart }
  /** The workflow sends start/transfer itself (no card data in the body). */
  | { by: 'workflow'; operation: 'transfer'; body: TransferStart }
  /** The starter sends card data itself, outside Temporal (claimStart, then reportStart). */
  | { by: 'starter' }
  /**
   * The payer uses a widget with a public token the workflow creates: the payment form (card), or with
   * `page: 'fps'` the provider's FPS page (QR and deep link).
   */
  | { by: 'widget'; widget: { lang?: string; showAutopayOption?: boolean }; page?: 'fps' }
  /** The provider call that created the session also started it (identity check). */
  | { by: 'provider' }
  /** Several payouts: the workflow sends each one of `payouts` in turn (common/payouts.ts). */
  | { by: 'queue' };

/** What the partner asked for, kept with the session for as long as it exists (never card data). */
export interface SessionRequest {
  money?: Money;
  /** The partner's own page for the payer after the return (paysaga's signed back_url comes first). */
  backUrl?: string;
  /** Sent as X-Submerchant-Id on this session's calls. */
  submerchantId?: string;
  /** The provider project this session's calls are signed for (PAYSAGA_PROJECTS); absent: the default. */
  projectId?: string;
  /** The payer's id in the partner's system (user_info.user_id): sessions are searched by it. */
  customerId?: string;
  /** paysaga's back_url for this session (signed return), given to the provider at start. */
  returnUrl?: string;
}

export interface SessionInput {
  sessionId: string;
  kind: SessionKind;
  reference: string;
  request: SessionRequest;
  start: StartSpec;
  settings: SessionSettings;
  /** FPS: how many times an expired QR is replaced by a new payment before the session ends. */
  qrRenewals?: number;
  /** A payout session of several payouts (start `queue`): each one the partner asked for, in order. */
  payouts?: PayoutOrder[];
  /** The session as its creator last saw it (initiate's answer). */
  initialSnapshot?: SessionInfo;
  /** A workflow to signal (sessionSettled) once the result is known: the subscription of a charge. */
  notify?: string;
  /** Set for a continued run: everything the session knew when the last run stopped. */
  carried?: SessionState;
  /** Continue-as-new once the history has this many events (default 8000, or when Temporal suggests). */
  continueAsNewAfter?: number;
  /** The carried state is that of a closed run: this run follows the session for a new window. */
  reopened?: boolean;
}

/** A refund the partner asked for, with what paysaga needs to follow it. */
export interface RefundRecord extends RefundView {
  /** The extra_info to send with it: kept only until the provider has taken the refund. */
  extraInfo?: unknown;
  /** The provider's refund records that existed before this one was sent (to tell it from them). */
  knownBefore?: string[];
  /** The provider's refusal, answered to the Update that asked. */
  refusal?: ProviderRefusal;
}

/** Everything a session knows; carried across continue-as-new and into a later run. */
export interface SessionState {
  sessionId: string;
  kind: SessionKind;
  reference: string;
  request: SessionRequest;
  settings: SessionSettings;
  createdAt: string;
  snapshot?: SessionInfo;
  /** When the snapshot was applied (workflow time, ms). */
  snapshotAt?: number;
  /** The phase the provider's state means; `phase` is this unless final or needing attention. */
  providerPhase: SessionPhase;
  /** Final once set: the phase and reason never change again. */
  final?: { phase: SessionPhase; reason?: EndReason; at: string };
  /** Why the session ended other than successfully, or what stopped it (set with `final`). */
  reason?: EndReason;
  attention?: Attention;
  publicToken?: string;
  /** Step names (common/steps.ts) the provider was sent, with when: resent only after a look at the state. */
  sent: Record<string, number>;
  /** The amount of the partial finalize paysaga sent, for the amount check of the result. */
  finalizeAmount?: number;
  /** FPS renewals used so far. */
  renewals: number;
  /**
   * The payouts of a session that holds (or may hold) several, in order: set by a batch, or when a payout
   * is added to a session of one (which then becomes its first). Absent: the session's one payout.
   */
  payouts?: PayoutOrder[];
  refunds: RefundRecord[];
  events: SessionEvent[];
  providerEvents: ProviderEventRecord[];
  /** Provider events received so far (the store's audit numbers them from 1). */
  auditCount?: number;
  /** Of those, how many are in the store. */
  auditRecorded?: number;
  /** The latest provider events with their payloads (bounded), for replay. */
  recorded: ProviderEventDelivery[];
  /** Outbound events (common/events.ts) emitted so far: the next one's sequence is this + 1. */
  eventSequence: number;
  /** The outbound event type last emitted for the phase (so a phase announces itself once). */
  announcedPhase?: SessionPhase;
  /** Chargeback and refund records already announced to the partner. */
  announced: string[];
  version: number;
  /** How many runs came before this one. */
  runs: number;
  /** When following the finished session ends, ms (carried so a continued run does not extend it). */
  followUntil?: number;
  /** The provider refused the starter's card (start/checkout or start/transfer). */
  startRefusal?: ProviderRefusal;
  /** When the start claim of the starter runs out (card data in flight), ms. */
  startClaimUntil?: number;
}

/**
 * How long a session holds its start open for the request sending its card (claimStart, or its first step
 * for the request that started it): longer than a start call with its retries lasts. The request sends the
 * card only within it (client/starter.ts), and the session takes one more look at the provider when it
 * ends, so a start that got through is never missed.
 */
export const START_CLAIM_MS = 2 * 60_000;

/**
 * init/checkout and init/transfer move money and the provider keeps an idempotency key 24 hours (spec:
 * Limits): a call whose answer was lost is sent again only within this much of the first try
 * (client/starter.ts), so a resend can never be a second payment.
 */
export const INIT_CHECKOUT_RESEND_WITHIN_MS = 23 * 3_600_000;

/**
 * How a reference's provider session is opened: transaction/initiate (the session, started later),
 * transaction/init/checkout (the session and its payment in one call: a merchant-initiated payment by
 * token), transaction/init/transfer (the session and its payout: a payout by token), or
 * sbp/identity_check (no key).
 */
export type OpenSpec =
  | { by: 'initiate'; body: InitiateRequest }
  | { by: 'init_checkout'; body: InitCheckoutRequest }
  | { by: 'init_transfer'; body: InitTransferRequest }
  | { by: 'identity_check'; body: IdentityCheckRequest };

/** One payout the partner asked for in a session, as the session's workflow keeps it. */
export interface PayoutOrder {
  /** The partner's reference of this payout, unique inside the session. */
  reference: string;
  money: Money;
  /** The start/transfer body (no card data: a token or an FPS account); absent for the session's first. */
  body?: TransferStart;
  addedAt: string;
  /** The session's own first payout (started with the session): the provider's first payout record. */
  first?: boolean;
  /** The provider's payout (po_...) once its start/transfer was answered. */
  payoutId?: string;
  /** The provider's payouts that existed when this one was first sent (to tell it from them). */
  knownBefore?: string[];
  /** The provider refused its start/transfer: it never existed there. */
  refused?: ProviderRefusal;
  /** Why it ended other than successfully, when paysaga knows more than the provider's error code. */
  reason?: EndReason;
}

/**
 * A provider event for this session (docs/decisions/016-results-are-proven.md: nobody can fake an outcome). A
 * webhook, or its replay, carries the body exactly as the provider signed it and the signature: the session
 * has its worker verify them again (verifyProviderEvent) before it believes a word. Without `signed` (a state
 * sync of the reconciler, a webhook whose body could not travel) the delivery is only a reason to read
 * transaction/state: what it claims is never applied. Runs from before the proof (not patched
 * `provider-proof`) applied `event` as it came.
 */
export interface ProviderEventDelivery {
  receivedAt: string;
  via: 'webhook' | 'replay' | 'sync';
  /** The webhook's raw body (UTF-8) and its X-Signature, as received. */
  signed?: { body: string; signature: string };
  /** What was heard, for the audit (type, updated_at) and for routing; never trusted by the session. */
  event?: WebhookEvent;
}

/** A new session's state: nothing heard yet, nothing sent (a workflow's first run, and tests). */
export function newSessionState(
  input: Pick<SessionInput, 'sessionId' | 'kind' | 'reference' | 'request' | 'settings' | 'payouts'>,
  createdAt: string,
): SessionState {
  return {
    sessionId: input.sessionId,
    kind: input.kind,
    reference: input.reference,
    request: input.request,
    settings: input.settings,
    createdAt,
    providerPhase: 'starting',
    sent: {},
    renewals: 0,
    refunds: [],
    events: [],
    providerEvents: [],
    recorded: [],
    eventSequence: 0,
    announced: [],
    version: 0,
    runs: 0,
    ...(input.payouts ? { payouts: input.payouts } : {}),
  };
}
