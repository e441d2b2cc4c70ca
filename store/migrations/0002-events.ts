/**
 * The events told to backends (a transactional outbox: written with the change they describe), the
 * endpoints that want them, and each delivery with every attempt.
 */
import { sql, type Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a migration sees the schema as it was then
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('counters')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value', 'bigint', (c) => c.notNull())
    .execute();
  await db.insertInto('counters').values({ name: 'events', value: 0 }).execute();

  await db.schema
    .createTable('events')
    .addColumn('seq', 'bigint', (c) => c.primaryKey())
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('sequence', 'integer', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('data', 'jsonb', (c) => c.notNull())
    .addUniqueConstraint('events_subject_sequence', ['subject', 'sequence'])
    .execute();
  await db.schema.createIndex('events_subject').on('events').columns(['subject', 'seq']).execute();
  await db.schema.createIndex('events_type').on('events').columns(['type', 'seq']).execute();
  await db.schema.createIndex('events_created').on('events').columns(['created_at']).execute();

  await db.schema
    .createTable('event_endpoints')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('events', sql`text[]`)
    .addColumn('source', 'text', (c) => c.notNull().check(sql`source in ('api', 'config')`))
    .addColumn('secret_version', 'integer', (c) => c.notNull())
    .addColumn('secret_key_id', 'text', (c) => c.notNull())
    .addColumn('previous_secrets', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('deleted_at', 'timestamptz')
    .execute();

  await db.schema
    .createTable('deliveries')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('event_seq', 'bigint', (c) => c.notNull().references('events.seq'))
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('endpoint_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) =>
      c.notNull().check(sql`status in ('pending', 'delivered', 'failed', 'canceled')`),
    )
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    // Times a worker took it to send: more than the attempts recorded means a sender died mid-attempt.
    .addColumn('taken', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'timestamptz', (c) => c.notNull())
    .addColumn('give_up_at', 'timestamptz', (c) => c.notNull())
    .addColumn('lease_until', 'timestamptz')
    .addColumn('lease_owner', 'text')
    .addColumn('redelivery', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('finished_at', 'timestamptz')
    .execute();
  // What is due, and the head of each (endpoint, subject) lane: only pending rows are indexed.
  await db.schema
    .createIndex('deliveries_due')
    .on('deliveries')
    .columns(['next_attempt_at'])
    .where(sql.ref('status'), '=', 'pending')
    .execute();
  await db.schema
    .createIndex('deliveries_lane')
    .on('deliveries')
    .columns(['endpoint_id', 'subject', 'event_seq'])
    .where(sql.ref('status'), '=', 'pending')
    .execute();
  await db.schema.createIndex('deliveries_event').on('deliveries').columns(['event_id']).execute();

  await db.schema
    .createTable('delivery_attempts')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('delivery_id', 'bigint', (c) => c.notNull().references('deliveries.id'))
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('endpoint_id', 'text', (c) => c.notNull())
    .addColumn('at', 'timestamptz', (c) => c.notNull())
    .addColumn('status', 'integer')
    .addColumn('error', 'text')
    .addColumn('latency_ms', 'integer', (c) => c.notNull())
    .addColumn('redelivery', 'boolean', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('delivery_attempts_event')
    .on('delivery_attempts')
    .columns(['event_id', 'id'])
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['delivery_attempts', 'deliveries', 'event_endpoints', 'events', 'counters'])
    await db.schema.dropTable(table).execute();
}
