/**
 * Sessions, the references that opened them, the operations the provider shows in them and the
 * provider-webhook audit. Every list a search makes has its index: newest first by (created_at, id).
 */
import { sql, type Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a migration sees the schema as it was then
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('client_references')
    .addColumn('reference', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('subject_id', 'text', (c) => c.unique())
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('opening', 'open', 'refused')`))
    .addColumn('refusal', 'jsonb')
    .addColumn('lease_until', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('reference', 'text', (c) => c.notNull().unique())
    .addColumn('phase', 'text', (c) => c.notNull())
    .addColumn('final', 'boolean', (c) => c.notNull())
    .addColumn('needs_attention', 'boolean', (c) => c.notNull())
    .addColumn('amount', 'bigint')
    .addColumn('currency', 'text')
    .addColumn('customer_id', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('final_at', 'timestamptz')
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addColumn('version', 'bigint', (c) => c.notNull())
    .addColumn('state', 'jsonb', (c) => c.notNull())
    .execute();
  const newestFirst = (name: string, ...leading: string[]) =>
    db.schema
      .createIndex(name)
      .on('sessions')
      .columns([...leading, 'created_at desc', 'id desc'])
      .execute();
  await newestFirst('sessions_created');
  await newestFirst('sessions_phase', 'phase');
  await newestFirst('sessions_kind', 'kind');
  await newestFirst('sessions_customer', 'customer_id');
  await db.schema
    .createIndex('sessions_attention')
    .on('sessions')
    .columns(['created_at desc', 'id desc'])
    .where(sql.ref('needs_attention'), '=', true)
    .execute();
  await db.schema
    .createIndex('sessions_amount')
    .on('sessions')
    .columns(['amount', 'created_at desc'])
    .execute();

  await db.schema
    .createTable('operations')
    .addColumn('session_id', 'text', (c) => c.notNull().references('sessions.id'))
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('amount', 'bigint')
    .addColumn('currency', 'text')
    .addColumn('captured', 'bigint')
    .addColumn('fee', 'bigint')
    .addColumn('error', 'text')
    .addColumn('first_seen_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('operations_pk', ['session_id', 'id'])
    .execute();
  await db.schema
    .createIndex('operations_kind_seen')
    .on('operations')
    .columns(['kind', 'first_seen_at'])
    .execute();

  await db.schema
    .createTable('provider_events')
    .addColumn('session_id', 'text', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('received_at', 'timestamptz', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('via', 'text', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text')
    .addColumn('detail', 'text')
    .addPrimaryKeyConstraint('provider_events_pk', ['session_id', 'seq'])
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['provider_events', 'operations', 'sessions', 'client_references'])
    await db.schema.dropTable(table).execute();
}
