/**
 * The tables of the store as Kysely sees them (store/migrations/ creates them). Column names are the
 * database's (snake_case); JSON columns hold the shapes named beside them. Timestamps come back as Date.
 */
import type { ColumnType, Generated, GeneratedAlways, JSONColumnType } from 'kysely';
import type { SessionState } from '../common/session-input';
import type { ProviderRefusal } from '../common/failures';

type Timestamp = ColumnType<Date, Date | string, Date | string>;
/** A timestamp the database fills in when the insert leaves it out (`default now()`). */
type DefaultTimestamp = ColumnType<Date, Date | string | undefined, Date | string>;
/** bigint columns read as numbers (pool type parser): every value paysaga stores fits in 2^53. */
type BigInt = ColumnType<number, number, number>;

/** A reference the partner used: unique, bound to the request's fingerprint and to what it opened. */
export interface ReferenceTable {
  reference: string;
  kind: string;
  fingerprint: string;
  /** The session (ps_...) or subscription (sub-...) the reference opened, once it exists. */
  subject_id: string | null;
  status: 'opening' | 'open' | 'refused';
  refusal: JSONColumnType<ProviderRefusal> | null;
  /** While opening: the request that is opening it holds it until then (a crashed one lets go). */
  lease_until: Timestamp | null;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
}

/** One payment session: the columns searches filter on, and its whole state (the workflows' record). */
export interface SessionTable {
  id: string;
  kind: string;
  reference: string;
  phase: string;
  final: boolean;
  needs_attention: boolean;
  amount: BigInt | null;
  currency: string | null;
  customer_id: string | null;
  created_at: Timestamp;
  final_at: Timestamp | null;
  updated_at: Timestamp;
  /** Grows with every change; a write with a version not above the row's changes nothing. */
  version: BigInt;
  state: JSONColumnType<SessionState>;
}

/** Every operation the provider shows in a session (payments, payouts, refunds, chargebacks). */
export interface OperationTable {
  session_id: string;
  id: string;
  kind: string;
  status: string;
  amount: BigInt | null;
  currency: string | null;
  captured: BigInt | null;
  fee: BigInt | null;
  error: string | null;
  first_seen_at: Timestamp;
  updated_at: Timestamp;
}

/** The provider-webhook audit: every provider event a session received, and what came of it. */
export interface ProviderEventTable {
  session_id: string;
  /** Per session, from 1: a write repeated by a retry adds nothing. */
  seq: number;
  received_at: Timestamp;
  type: string;
  via: string;
  outcome: string;
  updated_at: string | null;
  detail: string | null;
}

/** Named counters; `events` hands out the global order of events (see store/events.ts). */
export interface CounterTable {
  name: string;
  value: BigInt;
}

/** Every event told (or to be told) to backends: the transactional outbox. */
export interface EventTable {
  /** Global order, the cursor of the feed: rows become visible in this order. */
  seq: BigInt;
  id: string;
  subject: string;
  sequence: number;
  type: string;
  created_at: Timestamp;
  data: JSONColumnType<Record<string, unknown>>;
}

export interface EventEndpointTable {
  id: string;
  url: string;
  description: string | null;
  /** Event types it wants; null: all. */
  events: string[] | null;
  source: 'api' | 'config';
  /** The secret is derived from the master key `secret_key_id` and (id, secret_version): never stored. */
  secret_version: number;
  secret_key_id: string;
  /** Earlier secrets still accepted by receivers until they expire: [{version, keyId, expiresAt}]. */
  previous_secrets: JSONColumnType<{ version: number; keyId: string; expiresAt: string }[]>;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
  deleted_at: Timestamp | null;
}

/** One event to one endpoint: pending until delivered or given up on; each endpoint in order per subject. */
export interface DeliveryTable {
  id: GeneratedAlways<number>;
  event_seq: BigInt;
  event_id: string;
  subject: string;
  endpoint_id: string;
  status: 'pending' | 'delivered' | 'failed' | 'canceled';
  attempts: Generated<number>;
  taken: Generated<number>;
  next_attempt_at: Timestamp;
  give_up_at: Timestamp;
  /** A worker sending it now holds it until then (a crashed one lets go). */
  lease_until: Timestamp | null;
  lease_owner: string | null;
  redelivery: Generated<boolean>;
  created_at: DefaultTimestamp;
  finished_at: Timestamp | null;
}

export interface DeliveryAttemptTable {
  id: GeneratedAlways<number>;
  delivery_id: BigInt;
  event_id: string;
  endpoint_id: string;
  at: Timestamp;
  status: number | null;
  error: string | null;
  latency_ms: number;
  redelivery: boolean;
}

export interface SubscriptionTable {
  id: string;
  reference: string;
  status: string;
  needs_attention: boolean;
  amount: BigInt;
  currency: string;
  customer_id: string | null;
  next_charge_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  version: BigInt;
  /** The subscription as its view shows it (SubscriptionView). */
  state: JSONColumnType<Record<string, unknown>>;
}

export interface SubscriptionChargeTable {
  subscription_id: string;
  period: number;
  attempt: number;
  session_id: string | null;
  amount: BigInt;
  currency: string;
  outcome: string;
  /** The failed charge's reason code (common/reasons.ts; rows written before it hold the reason's text). */
  reason: string | null;
  due_at: Timestamp | null;
  started_at: Timestamp;
  finished_at: Timestamp | null;
  /** due, retry or collect (common/billing-policy.ts CHARGE_KINDS). */
  kind: Generated<string>;
  /** `<reference>:p<period>[:r<attempt>]`. */
  reference: string | null;
  /** hard, soft or unavailable: how a failure was classed. */
  decline_class: string | null;
}

/** A billing period of a subscription (docs/billing.md): what it cost and what became of it. */
export interface SubscriptionPeriodTable {
  subscription_id: string;
  period: number;
  due_at: Timestamp;
  amount: BigInt;
  currency: string;
  adjustment: BigInt | null;
  /** due, attempted, paid, owed or written_off. */
  status: string;
  attempts: number;
  paid_at: Timestamp | null;
  paid_by: string | null;
  owed_since: Timestamp | null;
  written_off_at: Timestamp | null;
  write_off_reason: string | null;
  /** The last failed attempt's reason code (common/reasons.ts). */
  reason: string | null;
  decline_class: string | null;
  updated_at: Timestamp;
}

export interface ReconciliationPassTable {
  id: string;
  task_queue: string;
  started_at: Timestamp;
  finished_at: Timestamp | null;
  checked: number;
  in_sync: number;
  repaired: number;
  drift: number;
  failed: number;
  list_failures: Generated<number>;
}

export interface ReconciliationFindingTable {
  id: GeneratedAlways<number>;
  pass_id: string;
  session_id: string;
  at: Timestamp;
  outcome: string;
  detail: string;
}

export interface Database {
  client_references: ReferenceTable;
  sessions: SessionTable;
  operations: OperationTable;
  provider_events: ProviderEventTable;
  counters: CounterTable;
  events: EventTable;
  event_endpoints: EventEndpointTable;
  deliveries: DeliveryTable;
  delivery_attempts: DeliveryAttemptTable;
  subscriptions: SubscriptionTable;
  subscription_charges: SubscriptionChargeTable;
  subscription_periods: SubscriptionPeriodTable;
  reconciliation_passes: ReconciliationPassTable;
  reconciliation_findings: ReconciliationFindingTable;
}
