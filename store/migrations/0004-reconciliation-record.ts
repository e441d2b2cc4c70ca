/**
 * The reconciler writes its passes as it goes (a page at a time, retried): a finding is kept once per
 * pass and session, and a pass counts the list calls it had to wait out.
 */
import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a migration sees the schema as it was then
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('reconciliation_passes')
    .addColumn('list_failures', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createIndex('reconciliation_findings_once')
    .on('reconciliation_findings')
    .columns(['pass_id', 'session_id'])
    .unique()
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('reconciliation_findings_once').execute();
  await db.schema.alterTable('reconciliation_passes').dropColumn('list_failures').execute();
}
