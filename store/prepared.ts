/**
 * Named prepared statements for the store's hottest statements: a session's record write and its read.
 * PostgreSQL then parses, analyses and plans such a statement once per connection instead of on every
 * call; for the record write (one statement of several CTEs) that was a quarter of the CPU a write
 * costs on the embedded store (`bench record-writes`, bench/RESULTS.md).
 *
 *   sql`${prepared}select state from ...`    // run as the statement ps_<hash of its text>
 *
 * Only statements whose text takes a few shapes may be marked: each distinct text is one statement every
 * connection keeps until it closes. Parameters vary freely. A pooler in transaction mode between paysaga
 * and PostgreSQL must support named statements (PgBouncer 1.21+ with `max_prepared_statements`), see
 * docs/operations.md.
 */
import { createHash } from 'node:crypto';
import { sql, type PostgresPool, type PostgresPoolClient } from 'kysely';
import type pg from 'pg';

const MARK = '/* prepared */';

/** Put first in a statement run as a named prepared statement. */
export const prepared = sql.raw(`${MARK} `);

/** The name of each marked text (a few shapes per schema, so a small map): no hash on the hot path. */
const names = new Map<string, string>();

/** What `pg` is asked to run: a marked text under a name derived from the text, others unnamed. */
export function statementOf(text: string, values: unknown[]): pg.QueryConfig {
  if (!text.startsWith(MARK)) return { text, values };
  // The name follows the text, so a changed statement (or another schema's) is another statement.
  let name = names.get(text);
  if (name === undefined) {
    name = `ps_${createHash('sha256').update(text).digest('hex').slice(0, 40)}`;
    names.set(text, name);
  }
  return { name, text, values };
}

/** The pool Kysely is given: every statement goes through `statementOf`. */
export function preparingPool(pool: pg.Pool): PostgresPool {
  return {
    async connect(): Promise<PostgresPoolClient> {
      const client = await pool.connect();
      function query(text: unknown, values?: readonly unknown[]): unknown {
        return typeof text === 'string'
          ? client.query(statementOf(text, [...(values ?? [])]))
          : // A cursor (Kysely's stream): passed as it is.
            client.query(text as pg.Submittable);
      }
      return {
        query: query as PostgresPoolClient['query'],
        release: (destroy?: boolean) => client.release(destroy),
      };
    },
    end: () => pool.end(),
  };
}
