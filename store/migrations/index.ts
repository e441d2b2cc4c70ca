/**
 * Every migration, in order. Names are their order: a migration is never changed once released; a change
 * of the schema is a new one. Applied by `paysaga setup` and by `paysaga dev`, `paysaga worker` and
 * `paysaga api` at start (store/database.ts `migrateStore`); the Migrator locks, so processes starting
 * together apply each once.
 */
import type { Migration } from 'kysely';
import * as sessions from './0001-sessions';
import * as events from './0002-events';
import * as subscriptions from './0003-subscriptions';
import * as reconciliationRecord from './0004-reconciliation-record';
import * as subscriptionPeriods from './0005-subscription-periods';

export const MIGRATIONS: Record<string, Migration> = {
  '0001-sessions': sessions,
  '0002-events': events,
  '0003-subscriptions': subscriptions,
  '0004-reconciliation-record': reconciliationRecord,
  '0005-subscription-periods': subscriptionPeriods,
};
