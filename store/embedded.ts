/**
 * The embedded store: PGlite (PostgreSQL in WebAssembly) on a data folder, served on a loopback port
 * (store/embedded-server.ts) so that every process of one stack shares it through the `pg` driver.
 * `paysaga dev` runs one in `<data>/pg`; the test run runs one for all its stacks (a schema each).
 */
import * as fs from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { serveEmbedded, type EmbeddedServer } from './embedded-server';

export interface EmbeddedStore {
  /** postgres://... of the local port: give it to every process as PAYSAGA_DATABASE_URL. */
  url: string;
  /** Where its files are (undefined: in memory, gone when it stops). */
  dataDir?: string;
  /** Stops serving and closes the database (its files stay). */
  stop(): Promise<void>;
}

/**
 * Opens (or creates) the database in `dataDir` (in memory when undefined) and serves it. A fresh folder
 * takes a few seconds and most of a GiB of memory while PostgreSQL initializes; reopening takes under a
 * second. One process at a time may open a folder.
 */
export async function startEmbeddedStore(
  o: { dataDir?: string; port?: number } = {},
): Promise<EmbeddedStore> {
  if (o.dataDir) fs.mkdirSync(o.dataDir, { recursive: true });
  const db = await PGlite.create(o.dataDir ?? 'memory://');
  let server: EmbeddedServer;
  try {
    server = await serveEmbedded(db, { port: o.port ?? 0 });
  } catch (err) {
    await db.close();
    throw err;
  }
  return {
    url: server.url,
    ...(o.dataDir ? { dataDir: o.dataDir } : {}),
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}
