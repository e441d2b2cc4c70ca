/**
 * The embedded store's thread (store/embedded.ts starts it): PGlite and the server that shares it run
 * here, off the main thread, so a query's WebAssembly never holds up the API's or the worker's event
 * loop. It opens the database, serves it, says where ({ url }) or why not ({ error }), and on 'stop'
 * closes both and says 'stopped'.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { serveEmbedded, type EmbeddedServer } from './embedded-server';

export interface EmbeddedThreadOptions {
  /** Undefined: in memory. */
  dataDir?: string;
  port: number;
}

export type EmbeddedThreadMessage =
  | { url: string }
  /** `code`: the system's, when there is one (EADDRINUSE: the port is taken). */
  | { error: string; code?: string }
  | 'stopped';

async function run(port: NonNullable<typeof parentPort>, o: EmbeddedThreadOptions): Promise<void> {
  let db: PGlite | undefined;
  let server: EmbeddedServer | undefined;
  try {
    db = await PGlite.create(o.dataDir ?? 'memory://');
    server = await serveEmbedded(db, { port: o.port });
  } catch (err) {
    await db?.close().catch(() => undefined);
    const { message, code } = err as { message?: string; code?: unknown };
    port.postMessage({
      error: message ?? String(err),
      ...(typeof code === 'string' ? { code } : {}),
    } satisfies EmbeddedThreadMessage);
    port.close();
    return;
  }
  port.on('message', (message: unknown) => {
    if (message !== 'stop') return;
    void (async () => {
      await server.stop();
      await db.close();
      port.postMessage('stopped' satisfies EmbeddedThreadMessage);
      port.close();
    })();
  });
  port.postMessage({ url: server.url } satisfies EmbeddedThreadMessage);
}

if (parentPort) void run(parentPort, workerData as EmbeddedThreadOptions);
