/**
 * The reconciler's record (workflows/reconciler.ts writes it a page at a time; GET /v1/reconciliation
 * reads it): each pass with its counts, and every session a pass found repaired, drifting or failing.
 * Counts only grow (a retried or replayed write of an earlier page changes nothing); a finding is kept
 * once per pass and session.
 */
import { sql, type Transaction } from 'kysely';
import type { DriftRecord, PassReport } from '../common/reconciler';
import type { Store } from './database';
import type { Database } from './schema';

export interface PassRecord {
  /** Stable across retries and replays: `<task queue>/<pass start>`. */
  id: string;
  taskQueue: string;
  pass: PassReport;
  /** List calls waited out so far, over every pass (cumulative). */
  listFailures: number;
  /** Findings of the page just done (earlier pages' are in the store already). */
  findings: DriftRecord[];
}

export async function recordPass(store: Store, r: PassRecord): Promise<void> {
  await store.db.transaction().execute(async (tx) => {
    await tx
      .insertInto('reconciliation_passes')
      .values({
        id: r.id,
        task_queue: r.taskQueue,
        started_at: r.pass.startedAt,
        finished_at: r.pass.finishedAt ?? null,
        checked: r.pass.checked,
        in_sync: r.pass.inSync,
        repaired: r.pass.repaired,
        drift: r.pass.drift,
        failed: r.pass.failed,
        list_failures: r.listFailures,
      })
      .onConflict((oc) =>
        oc
          .column('id')
          .doUpdateSet((eb) => ({
            finished_at: eb.ref('excluded.finished_at'),
            checked: eb.ref('excluded.checked'),
            in_sync: eb.ref('excluded.in_sync'),
            repaired: eb.ref('excluded.repaired'),
            drift: eb.ref('excluded.drift'),
            failed: eb.ref('excluded.failed'),
            list_failures: eb.ref('excluded.list_failures'),
          }))
          .where(({ eb, ref, and, or }) =>
            or([
              eb('reconciliation_passes.checked', '<', ref('excluded.checked')),
              and([
                eb('reconciliation_passes.checked', '=', ref('excluded.checked')),
                eb('reconciliation_passes.finished_at', 'is', null),
              ]),
            ]),
          ),
      )
      .execute();
    if (r.findings.length)
      await tx
        .insertInto('reconciliation_findings')
        .values(
          r.findings.map((f) => ({
            pass_id: r.id,
            session_id: f.sessionId,
            at: f.at,
            outcome: f.outcome,
            detail: f.detail,
          })),
        )
        .onConflict((oc) => oc.columns(['pass_id', 'session_id']).doNothing())
        .execute();
  });
}

const passOf = (row: {
  started_at: Date;
  finished_at: Date | null;
  checked: number;
  in_sync: number;
  repaired: number;
  drift: number;
  failed: number;
}): PassReport => ({
  startedAt: row.started_at.toISOString(),
  ...(row.finished_at ? { finishedAt: row.finished_at.toISOString() } : {}),
  checked: row.checked,
  inSync: row.in_sync,
  repaired: row.repaired,
  drift: row.drift,
  failed: row.failed,
});

export interface ReconciliationRecord {
  passes: number;
  lastPass?: PassReport;
  current?: PassReport;
  totals: Omit<PassReport, 'startedAt' | 'finishedAt'>;
  /** Newest first, at most `recent`. */
  findings: DriftRecord[];
  listFailures: number;
}

/** What the task queue's reconciler recorded; undefined when it never recorded a pass. */
export async function reconciliationOf(
  store: Store,
  taskQueue: string,
  recent = 50,
): Promise<ReconciliationRecord | undefined> {
  // One snapshot for every read: a pass recorded between them would show its findings without its counts.
  return store.db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute((tx) => readReconciliation(tx, taskQueue, recent));
}

async function readReconciliation(
  db: Transaction<Database>,
  taskQueue: string,
  recent: number,
): Promise<ReconciliationRecord | undefined> {
  const totals = await db
    .selectFrom('reconciliation_passes')
    .where('task_queue', '=', taskQueue)
    .select((eb) => [
      eb.fn.countAll<number>().as('passes'),
      eb.fn.count<number>('finished_at').as('finished'),
      sql<number>`coalesce(sum(checked), 0)`.as('checked'),
      sql<number>`coalesce(sum(in_sync), 0)`.as('in_sync'),
      sql<number>`coalesce(sum(repaired), 0)`.as('repaired'),
      sql<number>`coalesce(sum(drift), 0)`.as('drift'),
      sql<number>`coalesce(sum(failed), 0)`.as('failed'),
      // cumulative over the reconciler's life: the latest row holds the total
      sql<number>`coalesce(max(list_failures), 0)`.as('list_failures'),
    ])
    .executeTakeFirstOrThrow();
  if (Number(totals.passes) === 0) return undefined;
  const latest = (finished: boolean) =>
    db
      .selectFrom('reconciliation_passes')
      .selectAll()
      .where('task_queue', '=', taskQueue)
      .where('finished_at', finished ? 'is not' : 'is', null)
      .orderBy('started_at', 'desc')
      .limit(1)
      .executeTakeFirst();
  const [last, current] = await Promise.all([latest(true), latest(false)]);
  const findings = await db
    .selectFrom('reconciliation_findings as f')
    .innerJoin('reconciliation_passes as p', 'p.id', 'f.pass_id')
    .select(['f.session_id', 'f.at', 'f.outcome', 'f.detail'])
    .where('p.task_queue', '=', taskQueue)
    .orderBy('f.id', 'desc')
    .limit(recent)
    .execute();
  return {
    passes: Number(totals.finished),
    ...(last ? { lastPass: passOf(last) } : {}),
    ...(current ? { current: passOf(current) } : {}),
    totals: {
      checked: Number(totals.checked),
      inSync: Number(totals.in_sync),
      repaired: Number(totals.repaired),
      drift: Number(totals.drift),
      failed: Number(totals.failed),
    },
    findings: findings.map((f) => ({
      sessionId: f.session_id,
      at: f.at.toISOString(),
      outcome: f.outcome as DriftRecord['outcome'],
      detail: f.detail,
    })),
    listFailures: Number(totals.list_failures),
  };
}
