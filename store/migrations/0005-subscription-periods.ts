/**
 * Billing periods: every period of a subscription as a record (due, attempted, paid, owed, written off)
 * beside its charge attempts, so that what a customer owes is kept, listed and collected, never lost with
 * a workflow's history. Each attempt says what it was (on the due date, a retry, a collection) and how its
 * failure was classed.
 */
import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a migration sees the schema as it was then
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('subscription_periods')
    .addColumn('subscription_id', 'text', (c) => c.notNull().references('subscriptions.id'))
    .addColumn('period', 'integer', (c) => c.notNull())
    .addColumn('due_at', 'timestamptz', (c) => c.notNull())
    .addColumn('amount', 'bigint', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('adjustment', 'bigint')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('paid_at', 'timestamptz')
    .addColumn('paid_by', 'text')
    .addColumn('owed_since', 'timestamptz')
    .addColumn('written_off_at', 'timestamptz')
    .addColumn('write_off_reason', 'text')
    .addColumn('reason', 'text')
    .addColumn('decline_class', 'text')
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('subscription_periods_pk', ['subscription_id', 'period'])
    .execute();
  await db.schema
    .createIndex('subscription_periods_status')
    .on('subscription_periods')
    .columns(['subscription_id', 'status', 'period'])
    .execute();
  await db.schema
    .alterTable('subscription_charges')
    .addColumn('kind', 'text', (c) => c.notNull().defaultTo('due'))
    .execute();
  await db.schema.alterTable('subscription_charges').addColumn('reference', 'text').execute();
  await db.schema.alterTable('subscription_charges').addColumn('decline_class', 'text').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  for (const column of ['decline_class', 'reference', 'kind'])
    await db.schema.alterTable('subscription_charges').dropColumn(column).execute();
  await db.schema.dropTable('subscription_periods').execute();
}
