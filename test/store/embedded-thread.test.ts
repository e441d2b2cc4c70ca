/**
 * The embedded store computes in a thread of its own (store/embedded.ts): while it answers a long query,
 * the process that started it (`paysaga dev`, with its API and worker) goes on running. On the main
 * thread, PGlite's synchronous WebAssembly held every timer and request of the process until it was done.
 * Stopping it ends the thread and closes the database; a folder opened again still has its rows.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import pg from 'pg';
import { startEmbeddedStore } from '../../store/embedded';

jest.setTimeout(120_000);

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paysaga-embedded-thread-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

async function query<T>(url: string, text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text)).rows as T[];
  } finally {
    await client.end();
  }
}

it("keeps the starting process's timers running during a long query, and keeps its rows across a stop", async () => {
  const store = await startEmbeddedStore({ dataDir: dir });
  try {
    await query(store.url, 'create table kept (n int)');
    await query(store.url, 'insert into kept values (42)');
    let ticks = 0;
    const timer = setInterval(() => ticks++, 10);
    try {
      const [row] = await query<{ n: number }>(
        store.url,
        'select count(*)::int as n from generate_series(1, 3000000) g, lateral (select md5(g::text)) m',
      );
      expect(row!.n).toBe(3_000_000);
    } finally {
      clearInterval(timer);
    }
    // A query of about a second (PGlite hashes three million strings): timers fire throughout it. On the
    // main thread none fired until it was over (the count stayed at 0 or 1).
    expect(ticks).toBeGreaterThanOrEqual(10);
  } finally {
    await store.stop();
  }

  const again = await startEmbeddedStore({ dataDir: dir });
  try {
    expect(await query<{ n: number }>(again.url, 'select n from kept')).toEqual([{ n: 42 }]);
  } finally {
    await again.stop();
  }
});

it("fails to start on a port already taken, with the system's code, and the first store goes on", async () => {
  const store = await startEmbeddedStore();
  try {
    await expect(startEmbeddedStore({ port: Number(new URL(store.url).port) })).rejects.toMatchObject({
      code: 'EADDRINUSE',
    });
    expect(await query<{ one: number }>(store.url, 'select 1 as one')).toEqual([{ one: 1 }]);
  } finally {
    await store.stop();
  }
});
