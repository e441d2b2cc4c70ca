/**
 * docs/decisions/002-card-data-never-enters-temporal.md over the store as well: before the run's embedded
 * store stops, every row of every table in every schema the tests made is searched for the test card numbers
 * and card field names (the same needles as the history scan), by the database itself: each row's columns as
 * text (jsonb as its JSON, text as it is) joined, then position() of each needle.
 */
import pg from 'pg';
import { CARD_NEEDLES } from './history-scan';

export interface StoreScan {
  tables: number;
  findings: string[];
}

export async function scanStore(url: string): Promise<StoreScan> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const tables = await client.query<{ schema: string; table: string; columns: string[] }>(
      `select c.table_schema as schema, c.table_name as table, array_agg(c.column_name::text) as columns
       from information_schema.columns c
       join information_schema.tables t using (table_schema, table_name)
       where t.table_type = 'BASE TABLE' and c.table_schema not in ('pg_catalog', 'information_schema')
       group by c.table_schema, c.table_name`,
    );
    const findings: string[] = [];
    for (const { schema, table, columns } of tables.rows) {
      const name = `${client.escapeIdentifier(schema)}.${client.escapeIdentifier(table)}`;
      const text = `concat_ws(chr(1), ${columns.map((c) => `t.${client.escapeIdentifier(c)}::text`).join(', ')})`;
      const found = await client.query<{ needle: string; rows: string }>(
        `select n.needle, count(*) as rows from ${name} t, unnest($1::text[]) as n(needle)
         where position(n.needle in ${text}) > 0 group by n.needle`,
        [CARD_NEEDLES],
      );
      for (const f of found.rows) {
        const shown = f.needle.startsWith('"') ? f.needle : `${f.needle.slice(0, 6)}…${f.needle.slice(-4)}`;
        findings.push(`${schema}.${table}: ${f.rows} row(s) hold ${shown}`);
      }
    }
    return { tables: tables.rows.length, findings };
  } finally {
    await client.end();
  }
}
