/** Subscriptions with every charge, and the reconciler's passes with what they found. */
import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a migration sees the schema as it was then
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('subscriptions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('reference', 'text', (c) => c.notNull().unique())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('needs_attention', 'boolean', (c) => c.notNull())
    .addColumn('amount', 'bigint', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('customer_id', 'text')
    .addColumn('next_charge_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addColumn('version', 'bigint', (c) => c.notNull())
    .addColumn('state', 'jsonb', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('subscriptions_created')
    .on('subscriptions')
    .columns(['created_at desc', 'id desc'])
    .execute();
  await db.schema
    .createIndex('subscriptions_status')
    .on('subscriptions')
    .columns(['status', 'created_at desc', 'id desc'])
    .execute();

  await db.schema
    .createTable('subscription_charges')
    .addColumn('subscription_id', 'text', (c) => c.notNull().references('subscriptions.id'))
    .addColumn('period', 'integer', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('session_id', 'text')
    .addColumn('amount', 'bigint', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('due_at', 'timestamptz')
    .addColumn('started_at', 'timestamptz', (c) => c.notNull())
    .addColumn('finished_at', 'timestamptz')
    .addPrimaryKeyConstraint('subscription_charges_pk', ['subscription_id', 'period', 'attempt'])
    .execute();

  await db.schema
    .createTable('reconciliation_passes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('task_queue', 'text', (c) => c.notNull())
    .addColumn('started_at', 'timestamptz', (c) => c.notNull())
    .addColumn('finished_at', 'timestamptz')
    .addColumn('checked', 'integer', (c) => c.notNull())
    .addColumn('in_sync', 'integer', (c) => c.notNull())
    .addColumn('repaired', 'integer', (c) => c.notNull())
    .addColumn('drift', 'integer', (c) => c.notNull())
    .addColumn('failed', 'integer', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('reconciliation_passes_started')
    .on('reconciliation_passes')
    .columns(['task_queue', 'started_at desc'])
    .execute();
  await db.schema
    .createTable('reconciliation_findings')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('pass_id', 'text', (c) => c.notNull().references('reconciliation_passes.id'))
    .addColumn('session_id', 'text', (c) => c.notNull())
    .addColumn('at', 'timestamptz', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('detail', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('reconciliation_findings_recent')
    .on('reconciliation_findings')
    .columns(['id desc'])
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [
    'reconciliation_findings',
    'reconciliation_passes',
    'subscription_charges',
    'subscriptions',
  ])
    await db.schema.dropTable(table).execute();
}
