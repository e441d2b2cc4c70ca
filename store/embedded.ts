/**
 * The embedded store: PGlite (PostgreSQL in WebAssembly) on a data folder, served on a loopback port
 * (store/embedded-server.ts) so that every process of one stack shares it through the `pg` driver.
 * `paysaga dev` runs one in `<data>/pg`; the test run runs one for all its stacks (a schema each).
 *
 * PGlite runs in a thread of its own (store/embedded-thread.ts): its queries are synchronous
 * WebAssembly, and on the main thread every write of the worker held up the API's reads behind it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { EmbeddedThreadMessage, EmbeddedThreadOptions } from './embedded-thread';

export interface EmbeddedStore {
  /** postgres://... of the local port: give it to every process as PAYSAGA_DATABASE_URL. */
  url: string;
  /** Where its files are (undefined: in memory, gone when it stops). */
  dataDir?: string;
  /** Stops serving and closes the database (its files stay). */
  stop(): Promise<void>;
}

/**
 * The thread: the compiled file next to this one (dist/), or, run from TypeScript (tests, benchmarks),
 * the source compiled as it loads by the repository's hook (scripts/ts-hook.js).
 */
function startThread(workerData: EmbeddedThreadOptions): Worker {
  const compiled = path.join(__dirname, 'embedded-thread.js');
  if (fs.existsSync(compiled)) return new Worker(compiled, { workerData });
  const hook = path.resolve(__dirname, '../scripts/ts-hook.js');
  const source = path.join(__dirname, 'embedded-thread.ts');
  return new Worker(`require(${JSON.stringify(hook)}); require(${JSON.stringify(source)});`, {
    eval: true,
    workerData,
  });
}

/** The thread's next message; its failure or exit first is an error naming it. */
function nextMessage(thread: Worker, what: string): Promise<EmbeddedThreadMessage> {
  return new Promise((resolve, reject) => {
    const done = () => {
      thread.off('message', onMessage);
      thread.off('error', onError);
      thread.off('exit', onExit);
    };
    const onMessage = (m: EmbeddedThreadMessage) => (done(), resolve(m));
    const onError = (err: Error) => (
      done(),
      reject(new Error(`the embedded store ${what}: ${err.message}`, { cause: err }))
    );
    const onExit = (code: number) => (
      done(),
      reject(new Error(`the embedded store's thread exited (${code}) before it ${what}`))
    );
    thread.on('message', onMessage);
    thread.once('error', onError);
    thread.once('exit', onExit);
  });
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
  const thread = startThread({ ...(o.dataDir ? { dataDir: o.dataDir } : {}), port: o.port ?? 0 });
  const started = await nextMessage(thread, 'started').catch(async (err: unknown) => {
    await thread.terminate();
    throw err;
  });
  if (typeof started !== 'object' || !('url' in started)) {
    await thread.terminate();
    const failure = typeof started === 'object' ? started : { error: `it said ${started}` };
    throw Object.assign(new Error(`the embedded store could not start: ${failure.error}`), {
      ...(failure.code ? { code: failure.code } : {}),
    });
  }
  // Once serving, a failure of the thread leaves every process of the stack without its store: say so
  // loudly rather than answer 503s about a store nobody will bring back.
  let stopping = false;
  thread.on('error', (err) => {
    if (!stopping) throw new Error(`the embedded store's thread failed: ${err.message}`, { cause: err });
  });
  return {
    url: started.url,
    ...(o.dataDir ? { dataDir: o.dataDir } : {}),
    async stop() {
      if (stopping) return;
      stopping = true;
      const stopped = nextMessage(thread, 'stopped');
      thread.postMessage('stop');
      try {
        await stopped;
      } finally {
        await thread.terminate();
      }
    },
  };
}
