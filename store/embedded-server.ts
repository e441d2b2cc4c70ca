/**
 * Serves one PGlite database (PostgreSQL compiled to WebAssembly, a single backend session) to many
 * PostgreSQL clients over the wire protocol on a local port, so every process of a stack (`paysaga dev`,
 * a test run, a `paysaga worker` it spawns) talks to the embedded store exactly as to a PostgreSQL
 * server: the same `pg` driver, SQL and migrations.
 *
 * Why not `@electric-sql/pglite-socket`: its multiplexer (0.2.17) forwards each message of each
 * connection as it arrives, so the Parse/Bind/Execute of two clients interleave on the one backend
 * session; measured here with 12 concurrent pg clients it answered "unnamed prepared statement does not
 * exist", "portal does not exist" and rows of another client's query, then hung. This server keeps the
 * session for one connection from the first message of a request until the backend is ready again
 * outside a transaction:
 *
 *   - a unit is what a client sends up to a point the backend answers: Sync, a simple Query, Flush, or
 *     the end of a COPY; units run one at a time;
 *   - after a unit, the last ReadyForQuery status decides: idle ('I') releases the session; in a
 *     transaction ('T', 'E') or no ReadyForQuery yet (mid extended query, COPY) keeps it for that
 *     connection, whose units then go first;
 *   - a connection that ends while holding the session has its work rolled back, then the session is
 *     released. Named prepared statements are each connection's own (embedded-statements.ts). Session
 *     settings (`SET`, the startup packet's options) are shared by every client: paysaga's queries name
 *     their schema instead.
 */
import * as net from 'node:net';
import type { PGlite } from '@electric-sql/pglite';
import { ownStatementNames } from './embedded-statements';

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;
/** Sync, then ROLLBACK: what a connection that went away leaves behind is undone. */
const SYNC = Buffer.from([0x53, 0, 0, 0, 4]);
const ROLLBACK = simpleQuery('ROLLBACK');

/** Unit ends: Sync, Query, Flush, CopyDone, CopyFail. */
const UNIT_ENDS = new Set(['S', 'Q', 'H', 'c', 'f']);

interface Job {
  connection: Connection;
  unit: Uint8Array;
  done: (out: Buffer | Error) => void;
}

interface Connection {
  socket: net.Socket;
  /** Units of this connection are answered in order. */
  chain: Promise<void>;
  /** Its statement names on the shared session (embedded-statements.ts), and those it prepared. */
  prefix: string;
  prepared: Set<string>;
}

export interface EmbeddedServer {
  host: string;
  port: number;
  /** postgres://postgres@host:port/postgres */
  url: string;
  /** Stops listening and ends every connection (the database stays open: the caller closes it). */
  stop(): Promise<void>;
}

export async function serveEmbedded(
  db: PGlite,
  o: { host?: string; port?: number } = {},
): Promise<EmbeddedServer> {
  const host = o.host ?? '127.0.0.1';
  const queue: Job[] = [];
  let holder: Connection | undefined;
  let running = false;
  let stopping = false;
  let opened = 0;
  const connections = new Set<Connection>();

  const run = async (unit: Uint8Array): Promise<Buffer> => {
    const chunks: Buffer[] = [];
    await db.runExclusive(() =>
      db.execProtocolRawStream(unit, { onRawData: (data) => chunks.push(Buffer.from(data)) }),
    );
    return Buffer.concat(chunks);
  };

  const pump = async (): Promise<void> => {
    if (running) return;
    running = true;
    try {
      for (;;) {
        const at = holder ? queue.findIndex((j) => j.connection === holder) : 0;
        if (at < 0 || queue.length === 0) return;
        const [job] = queue.splice(at, 1);
        try {
          const out = await run(job!.unit);
          holder = readyStatus(out) === 'I' ? undefined : job!.connection;
          job!.done(out);
        } catch (err) {
          job!.done(err as Error);
        }
      }
    } finally {
      running = false;
    }
  };

  const submit = (connection: Connection, unit: Uint8Array): Promise<Buffer> =>
    new Promise((resolve, reject) => {
      queue.push({ connection, unit, done: (out) => (out instanceof Error ? reject(out) : resolve(out)) });
      void pump();
    });

  /**
   * A connection gone: its unfinished work is undone and the session freed if it held it, and the
   * statements it prepared are deallocated, as at the end of a PostgreSQL session.
   */
  const release = async (connection: Connection): Promise<void> => {
    for (let i = queue.length - 1; i >= 0; i--)
      if (queue[i]!.connection === connection) queue.splice(i, 1)[0]!.done(new Error('connection closed'));
    if (holder === connection) {
      try {
        const out = await run(SYNC);
        if (readyStatus(out) !== 'I') await run(ROLLBACK);
      } finally {
        holder = undefined;
        void pump();
      }
    }
    for (const name of connection.prepared) {
      if (stopping) return;
      await submit(connection, simpleQuery(`DEALLOCATE "${name.replace(/"/g, '""')}"`)).catch(
        () => undefined,
      );
    }
  };

  const server = net.createServer((socket) => {
    const connection: Connection = {
      socket,
      chain: Promise.resolve(),
      prefix: `c${++opened}_`,
      prepared: new Set(),
    };
    connections.add(connection);
    socket.setNoDelay(true);
    let buffered = Buffer.alloc(0);
    let started = false;
    let pending: Buffer[] = [];
    const send = (messages: Buffer[]) => {
      const unit = new Uint8Array(Buffer.concat(messages));
      connection.chain = connection.chain
        .then(() => submit(connection, unit))
        .then(
          (out) => {
            if (!socket.destroyed) socket.write(out);
          },
          () => {
            socket.destroy();
          },
        );
    };
    socket.on('data', (data) => {
      buffered = Buffer.concat([buffered, data]);
      for (;;) {
        if (!started) {
          // The startup phase: length-prefixed packets without a type byte.
          if (buffered.length < 8) return;
          const length = buffered.readInt32BE(0);
          if (buffered.length < length) return;
          const code = buffered.readInt32BE(4);
          const packet = buffered.subarray(0, length);
          buffered = buffered.subarray(length);
          if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
            socket.write('N'); // no TLS: loopback only
            continue;
          }
          if (code === CANCEL_REQUEST) {
            socket.end(); // a query cannot be cancelled on the shared session
            return;
          }
          started = true;
          send([packet]);
          continue;
        }
        if (buffered.length < 5) return;
        const length = 1 + buffered.readInt32BE(1);
        if (buffered.length < length) return;
        const type = String.fromCharCode(buffered[0]!);
        const message = buffered.subarray(0, length);
        buffered = buffered.subarray(length);
        if (type === 'X') {
          // Terminate ends this client, never the one backend session every client shares.
          socket.end();
          return;
        }
        try {
          pending.push(ownStatementNames(message, connection.prefix, connection.prepared));
        } catch {
          socket.destroy(); // a malformed message: this client is done, the shared session is not touched
          return;
        }
        if (UNIT_ENDS.has(type)) {
          send(pending);
          pending = [];
        }
      }
    });
    socket.on('error', () => socket.destroy());
    socket.on('close', () => {
      connections.delete(connection);
      void connection.chain.then(() => release(connection)).catch(() => undefined);
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;
  return {
    host,
    port,
    url: `postgres://postgres@${host.includes(':') ? `[${host}]` : host}:${port}/postgres`,
    async stop() {
      stopping = true;
      for (const c of connections) c.socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      while (running || holder) await new Promise((r) => setTimeout(r, 5));
    },
  };
}

/** The status byte of the last ReadyForQuery ('Z') among the backend's messages, if any. */
export function readyStatus(out: Buffer): string | undefined {
  let status: string | undefined;
  for (let at = 0; at + 5 <= out.length;) {
    const length = out.readInt32BE(at + 1);
    if (out[at] === 0x5a && length === 5) status = String.fromCharCode(out[at + 5]!);
    at += 1 + length;
  }
  return status;
}

function simpleQuery(sql: string): Buffer {
  const text = Buffer.from(`${sql}\0`, 'utf8');
  const header = Buffer.alloc(5);
  header.write('Q', 0);
  header.writeInt32BE(4 + text.length, 1);
  return Buffer.concat([header, text]);
}
