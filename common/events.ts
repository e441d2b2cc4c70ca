/**
 * Events paysaga sends to the partner's backend (docs/decisions/013-the-backend-is-told.md): every change a
 * backend cares about becomes one signed event, delivered at least once, in order per session (or
 * subscription), from the store's transactional outbox (store/events.ts). This file is the contract every
 * layer shares: the type names, the envelope, and how ids are made. Safe for workflow code (no I/O).
 */

export const SESSION_EVENT_TYPES = [
  'session.created',
  'session.awaiting_payer',
  'session.awaiting_approval',
  'session.awaiting_finalization',
  'session.needs_attention',
  'session.succeeded',
  'session.failed',
  'session.canceled',
  'session.refunded',
  'session.chargeback',
  'session.drift_detected',
  // One payout of a session of several ended (data.operation names it); the session's own result follows
  // once every payout has ended.
  'session.payout_succeeded',
  'session.payout_failed',
  'session.payout_canceled',
] as const;

/**
 * A subscription's events (docs/billing.md, "Events"): `data` is the subscription's view, with
 * `data.billingPeriod` (the period it is about) on charged, charge_failed and the period_* events, and
 * `data.change` on changed.
 */
export const SUBSCRIPTION_EVENT_TYPES = [
  'subscription.created',
  'subscription.charged',
  'subscription.charge_failed',
  // A period unpaid after its retries (or missed in a catch-up): owed until collected or written off.
  'subscription.period_owed',
  // An owed period paid later (with the next charge, or the partner's collect).
  'subscription.period_collected',
  'subscription.period_written_off',
  // A hard decline: billing waits for a new token (change) and a resume.
  'subscription.payment_method_required',
  'subscription.past_due',
  'subscription.paused',
  'subscription.resumed',
  'subscription.changed',
  // A cancel at the end of the period paid for: `subscription.canceled` follows then.
  'subscription.cancel_scheduled',
  // data.cancelation.atPeriodEnd says whether it was at the period end.
  'subscription.canceled',
  'subscription.ended',
] as const;

export const EVENT_TYPES = [...SESSION_EVENT_TYPES, ...SUBSCRIPTION_EVENT_TYPES] as const;

export type SessionEventType = (typeof SESSION_EVENT_TYPES)[number];
export type SubscriptionEventType = (typeof SUBSCRIPTION_EVENT_TYPES)[number];
export type EventType = (typeof EVENT_TYPES)[number];

export const isEventType = (t: unknown): t is EventType =>
  typeof t === 'string' && (EVENT_TYPES as readonly string[]).includes(t);

/**
 * What a backend receives (the body of the POST, and each item of `GET /v1/events`). `data` is the
 * session (or subscription) view at the moment of the change; it never holds card data.
 */
export interface PaysagaEvent<D = unknown> {
  /** Deterministic from (subject, sequence): the same change never yields two ids. */
  id: string;
  type: EventType;
  /** ISO time of the change (workflow time). */
  created: string;
  session_id?: string;
  subscription_id?: string;
  /** 1, 2, 3, ... per subject (session or subscription): the order of delivery. */
  sequence: number;
  data: D;
}

/** The subject an event is about: its session id (`ps_...`) or subscription id (`sub-...`). */
export function eventSubject(e: Pick<PaysagaEvent, 'session_id' | 'subscription_id'>): string {
  const subject = e.session_id ?? e.subscription_id;
  if (!subject) throw new Error('an event names a session_id or a subscription_id');
  return subject;
}

/** `evt_<subject>_<sequence>`. */
export function eventId(subject: string, sequence: number): string {
  return `evt_${subject}_${sequence}`;
}

/**
 * The next event about a session or subscription: numbered after the subject's `eventSequence` (carried
 * across runs, so a later run goes on counting), its id made from both. `data` is read after the number
 * is taken.
 */
export function nextEvent<D>(
  holder: { eventSequence: number },
  subject: { session_id: string } | { subscription_id: string },
  type: EventType,
  created: string,
  data: () => D,
): PaysagaEvent<D> {
  const sequence = ++holder.eventSequence;
  const id = 'session_id' in subject ? subject.session_id : subject.subscription_id;
  return { id: eventId(id, sequence), type, created, ...subject, sequence, data: data() };
}

/** `evt_<subject>_<sequence>`: a subject as EVENT_SUBJECT_PATTERN allows, a sequence from 1 (no leading 0). */
export const EVENT_ID_PATTERN = /^evt_([A-Za-z0-9_.:-]{1,160})_([1-9][0-9]{0,14})$/;

/** The subject and sequence an event id was made from, or undefined for anything else. */
export function parseEventId(id: string): { subject: string; sequence: number } | undefined {
  const m = EVENT_ID_PATTERN.exec(id);
  return m ? { subject: m[1]!, sequence: Number(m[2]) } : undefined;
}

/** Header names of a delivery (see client/ for the verification helper). */
export const EVENT_SIGNATURE_HEADER = 'Paysaga-Signature';
export const EVENT_ID_HEADER = 'Paysaga-Event-Id';
