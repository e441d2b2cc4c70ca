import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as NodeSqlite from 'node-sqlite3-wasm';
import type { Database as SqliteDatabase, Statement } from 'node-sqlite3-wasm';
import { processAlive } from './process-alive';
import {
  COLLECTIONS,
  emptyStoredState,
  LOGS,
  type Collection,
  type Log,
  type SandboxStore,
  type StoredState,
} from './store';

/*
 * The sandbox's state in one SQLite file (node-sqlite3-wasm: SQLite compiled to WebAssembly, reading and
 * writing the file through node:fs; no native module, no install script). One table per collection
 * (key, JSON doc) and per log (seq, JSON doc), readable with any sqlite3 shell once the sandbox stopped.
 *
 * Durability: WAL journal with synchronous=NORMAL, so a commit is written to the WAL file (in the operating
 * system's hands) when commit() returns: a process killed at any point loses at most the unit of work it
 * had not committed, and SQLite rolls the WAL forward on the next open. Only a crash of the machine itself
 * can lose the last commits; FULL would guard against that with an fsync per commit, which took a tenth of
 * `paysaga dev`'s main thread and blocked its event loop (bench dev, 2026-11-27). `paysaga dev` runs the
 * Temporal dev server's SQLite the same way.
 *
 * locking_mode=EXCLUSIVE: one process owns the file while it is open (WAL then needs no shared memory,
 * which this VFS does not offer).
 *
 * The VFS locks with a `<file>.lock` directory, which a killed process leaves behind. So the owner also
 * writes `<file>.pid`: a lock whose owner no longer runs is stale and removed; a live owner is refused.
 * A pid file naming this very process, for a file this process has not opened, is stale too: a container
 * killed and started again runs its sandbox under the same small pid, and its volume still holds the
 * pid file of the killed run. (Pids say nothing across containers: a data folder is one sandbox's.)
 */

/** The files this process holds open, to tell a second open here from a stale pid file that names us. */
const openHere = new Set<string>();

const SCHEMA_VERSION = 1;

export class SandboxStoreError extends Error {
  override name = 'SandboxStoreError';
}

interface Change {
  collection: Collection;
  key: string;
  removed: boolean;
  value: unknown;
}

function loadSqlite(): typeof NodeSqlite {
  // Loaded only in file mode, so the many in-memory sandboxes of the tests never compile the WebAssembly.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('node-sqlite3-wasm') as typeof NodeSqlite;
}

export class SqliteStore implements SandboxStore {
  readonly durable = true;
  readonly location: string;
  private readonly db: SqliteDatabase;
  private readonly ownerFile: string;
  private readonly statements = new Map<string, Statement>();
  private readonly changes = new Map<string, Change>();
  private appends: { log: Log; seq: number; value: unknown }[] = [];
  private trims: { log: Log; uptoSeq: number }[] = [];
  private closed = false;

  /** Opens (or creates) the file; throws SandboxStoreError when another live process owns it. */
  constructor(file: string) {
    this.location = path.resolve(file);
    fs.mkdirSync(path.dirname(this.location), { recursive: true });
    this.ownerFile = `${this.location}.pid`;
    this.takeOwnership();
    let db: SqliteDatabase | undefined;
    try {
      const { Database } = loadSqlite();
      db = new Database(this.location);
      db.exec('PRAGMA locking_mode = EXCLUSIVE');
      db.get('PRAGMA journal_mode = WAL');
      db.exec('PRAGMA synchronous = NORMAL');
      migrate(db, this.location);
    } catch (err) {
      try {
        db?.close();
      } finally {
        fs.rmSync(this.ownerFile, { force: true });
        openHere.delete(this.location);
      }
      if (err instanceof SandboxStoreError) throw err;
      throw new SandboxStoreError(
        `cannot open the sandbox store ${this.location}: ${(err as Error).message}`,
      );
    }
    this.db = db;
  }

  private takeOwnership(): void {
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        fs.writeFileSync(this.ownerFile, `${process.pid}\n`, { flag: 'wx', mode: 0o600 });
        openHere.add(this.location);
        // We own the file now: a VFS lock left behind by a killed owner is stale.
        fs.rmSync(`${this.location}.lock`, { recursive: true, force: true });
        return;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const pid = Number.parseInt(readOr(this.ownerFile, ''), 10);
      const stale = pid === process.pid && !openHere.has(this.location);
      if (Number.isInteger(pid) && pid > 0 && !stale && processAlive(pid))
        throw new SandboxStoreError(
          `the sandbox store ${this.location} is in use by process ${pid}` +
            (pid === process.pid
              ? ' (this one: close the other sandbox first)'
              : `; stop it, or use another data folder (should process ${pid} be no sandbox, delete ${this.ownerFile})`),
        );
      fs.rmSync(this.ownerFile, { force: true });
    }
    throw new SandboxStoreError(
      `cannot take the sandbox store ${this.location}: another process races for it`,
    );
  }

  private statement(sql: string): Statement {
    let s = this.statements.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.statements.set(sql, s);
    }
    return s;
  }

  put(collection: Collection, key: string, value: unknown): void {
    checkKey(key);
    this.changes.set(`${collection}\0${key}`, { collection, key, removed: false, value });
  }

  remove(collection: Collection, key: string): void {
    checkKey(key);
    this.changes.set(`${collection}\0${key}`, { collection, key, removed: true, value: undefined });
  }

  append(log: Log, seq: number, value: unknown): void {
    this.appends.push({ log, seq, value });
  }

  trim(log: Log, uptoSeq: number): void {
    this.trims.push({ log, uptoSeq });
  }

  commit(): void {
    if (this.closed) throw new SandboxStoreError(`the sandbox store ${this.location} is closed`);
    if (this.changes.size === 0 && this.appends.length === 0 && this.trims.length === 0) return;
    // Serialized before the transaction opens: a value that cannot be written changes nothing.
    const rows = [...this.changes.values()].map((c) => ({
      ...c,
      doc: c.removed ? '' : JSON.stringify(c.value),
    }));
    const appended = this.appends.map((a) => ({ ...a, doc: JSON.stringify(a.value) }));
    this.db.exec('BEGIN IMMEDIATE');
    try {
      for (const r of rows) {
        if (r.removed) this.statement(`DELETE FROM ${r.collection} WHERE key = ?`).run([r.key]);
        else
          this.statement(
            `INSERT INTO ${r.collection} (key, doc) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET doc = excluded.doc`,
          ).run([r.key, r.doc]);
      }
      for (const a of appended)
        this.statement(`INSERT OR REPLACE INTO ${a.log} (seq, doc) VALUES (?, ?)`).run([a.seq, a.doc]);
      for (const t of this.trims) this.statement(`DELETE FROM ${t.log} WHERE seq <= ?`).run([t.uptoSeq]);
      this.db.exec('COMMIT');
    } catch (err) {
      try {
        this.db.exec('ROLLBACK');
      } catch {
        // the failed COMMIT may have rolled back already
      }
      throw new SandboxStoreError(
        `writing the sandbox store ${this.location} failed: ${(err as Error).message}`,
      );
    }
    this.changes.clear();
    this.appends = [];
    this.trims = [];
  }

  load(): StoredState {
    const state = emptyStoredState();
    for (const c of COLLECTIONS) {
      for (const row of this.db.all(`SELECT key, doc FROM ${c}`) as { key: string; doc: string }[])
        if (!(c === 'meta' && row.key === 'schema')) state.collections[c].set(row.key, JSON.parse(row.doc));
    }
    for (const l of LOGS)
      state.logs[l] = (this.db.all(`SELECT doc FROM ${l} ORDER BY seq`) as { doc: string }[]).map((r) =>
        JSON.parse(r.doc),
      );
    return state;
  }

  close(): void {
    if (this.closed) return;
    try {
      this.commit();
    } finally {
      this.closed = true;
      for (const s of this.statements.values()) s.finalize();
      this.statements.clear();
      this.db.close();
      fs.rmSync(this.ownerFile, { force: true });
      openHere.delete(this.location);
    }
  }
}

/** Creates the tables of a new file; refuses a file of another schema version. */
function migrate(db: SqliteDatabase, location: string): void {
  db.exec('BEGIN IMMEDIATE');
  try {
    for (const c of COLLECTIONS)
      db.exec(`CREATE TABLE IF NOT EXISTS ${c} (key TEXT PRIMARY KEY, doc TEXT NOT NULL) WITHOUT ROWID`);
    for (const l of LOGS)
      db.exec(`CREATE TABLE IF NOT EXISTS ${l} (seq INTEGER PRIMARY KEY, doc TEXT NOT NULL)`);
    const row = db.get(`SELECT doc FROM meta WHERE key = 'schema'`) as { doc: string } | null;
    if (!row) db.run(`INSERT INTO meta (key, doc) VALUES ('schema', ?)`, [String(SCHEMA_VERSION)]);
    else if (Number(row.doc) !== SCHEMA_VERSION)
      throw new SandboxStoreError(
        `the sandbox store ${location} has schema ${row.doc}, this version reads ${SCHEMA_VERSION}: ` +
          'delete the file (the sandbox forgets its sessions) or use the version that wrote it',
      );
    db.exec('COMMIT');
  } catch (err) {
    db.exec('ROLLBACK');
    throw err;
  }
}

/** SQLite text binding ends at a NUL: two keys differing after one would be the same row. */
function checkKey(key: string): void {
  if (key.includes('\0'))
    throw new SandboxStoreError(`a store key may not contain NUL: ${JSON.stringify(key)}`);
}

function readOr(file: string, fallback: string): string {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    return fallback;
  }
}
