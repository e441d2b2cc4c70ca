/**
 * Activities that write paysaga's store of record (docs/decisions/015-paysaga-remembers.md). Workflows are
 * the only writers of their records and call these as activities: each write is idempotent and forward
 * only (a row's version only grows; events are added once by id), so a retry, a replay or a late attempt
 * changes nothing it should not, and a store that is down for minutes only delays the write.
 */
import type { Store } from '../store/database';
import type { FanOut } from '../store/events';
import { recordSession, type RecordResult, type SessionRecord } from '../store/sessions';
import { recordSubscription, type SubscriptionRecord } from '../store/subscriptions';

export type { AuditEntry, RecordResult, SessionRecord, SessionSummary } from '../store/sessions';
export type { SubscriptionRecord } from '../store/subscriptions';

export interface StoreActivities {
  /** The session's state, its operations, new audit entries and new events, in one transaction. */
  recordSession(record: SessionRecord): Promise<RecordResult>;
  /** The subscription's view, its charges and the events not confirmed yet, in one transaction. */
  recordSubscription(record: SubscriptionRecord): Promise<RecordResult>;
}

export function createStoreActivities(o: { store: Store; fanOut?: FanOut }): StoreActivities {
  return {
    recordSession: (record) => recordSession(o.store, record, o.fanOut),
    recordSubscription: (record) => recordSubscription(o.store, record, o.fanOut),
  };
}
