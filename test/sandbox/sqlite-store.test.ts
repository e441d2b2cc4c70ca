/*
 * The sandbox's SQLite file on its own: what is committed comes back, nothing uncommitted does, a
 * failed commit writes nothing, one process owns the file, a dead owner's lock is taken over (also one
 * that names this process's pid, as after a container restart), and a file of another schema version is
 * refused.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Database } from 'node-sqlite3-wasm';
import { SqliteStore } from '../../sandbox/sqlite-store';

let dir: string;
let file: string;

/** What the store says when another owner (here: this very process) holds the file. */
const inUse = (at: string) =>
  `the sandbox store ${at} is in use by process ${process.pid} (this one: close the other sandbox first)`;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paysaga-sqlite-store-'));
  file = path.join(dir, 'sandbox.sqlite');
});

afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

test('committed puts, removes, appends and trims come back; a live object is written as it is at commit', () => {
  const store = new SqliteStore(file);
  const session = { id: 'ps_1', stage: 'preparing' };
  store.put('sessions', 'ps_1', session);
  store.put('sessions', 'ps_2', { id: 'ps_2' });
  session.stage = 'awaiting_3ds'; // changed after put, before commit
  for (const seq of [1, 2, 3]) store.append('ledger', seq, { seq, kind: 'hold' });
  store.commit();
  store.remove('sessions', 'ps_2');
  store.trim('ledger', 1);
  store.put('jobs', 'job_1', { id: 'job_1' }); // never committed before close: close commits it
  store.close();

  const again = new SqliteStore(file);
  const loaded = again.load();
  again.close();
  expect([...loaded.collections.sessions.entries()]).toEqual([
    ['ps_1', { id: 'ps_1', stage: 'awaiting_3ds' }],
  ]);
  expect(loaded.logs.ledger).toEqual([
    { seq: 2, kind: 'hold' },
    { seq: 3, kind: 'hold' },
  ]);
  expect([...loaded.collections.jobs.keys()]).toEqual(['job_1']);
});

test('a commit that cannot write changes nothing and says so', () => {
  const store = new SqliteStore(file);
  store.put('sessions', 'ok', { id: 'ok' });
  store.commit();
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  store.put('sessions', 'ps_new', { id: 'ps_new' });
  store.put('sessions', 'ps_bad', cyclic);
  // V8's words for it differ between versions: its class is the contract.
  expect(() => store.commit()).toThrow(TypeError);
  store.remove('sessions', 'ps_bad'); // the faulty change replaced: the rest goes through
  store.commit();
  expect([...store.load().collections.sessions.keys()].sort()).toEqual(['ok', 'ps_new']);
  expect(() => store.put('sessions', 'a\0b', {})).toThrow(
    new Error('a store key may not contain NUL: "a\\u0000b"'),
  );
  store.close();
});

test('one owner at a time; the lock of an owner that no longer runs is taken over', () => {
  const store = new SqliteStore(file);
  expect(() => new SqliteStore(file)).toThrow(new Error(inUse(file)));
  store.close();

  // What a killed owner leaves: its pid file and the VFS lock directory.
  const dead = spawnSync(process.execPath, [
    '-e',
    'process.stdout.write(String(process.pid))',
  ]).stdout.toString();
  fs.writeFileSync(`${file}.pid`, `${dead}\n`);
  fs.mkdirSync(`${file}.lock`);
  const next = new SqliteStore(file);
  expect(fs.readFileSync(`${file}.pid`, 'utf8').trim()).toBe(String(process.pid));
  next.close();
  expect(fs.existsSync(`${file}.pid`)).toBe(false);
});

test("a pid file naming this process for a file it has not opened is stale (a container's sandbox killed and restarted under the same pid)", () => {
  new SqliteStore(file).close();
  // What the killed run left in the volume: its pid, which the restarted process has again.
  fs.writeFileSync(`${file}.pid`, `${process.pid}\n`);
  fs.mkdirSync(`${file}.lock`);
  const restarted = new SqliteStore(file);
  expect(() => new SqliteStore(file)).toThrow(new Error(inUse(file)));
  restarted.close();
  expect(fs.existsSync(`${file}.pid`)).toBe(false);
});

test('a file of another schema version is refused and left as it is', () => {
  new SqliteStore(file).close();
  const db = new Database(file);
  db.exec('PRAGMA locking_mode = EXCLUSIVE'); // a WAL file, and this VFS has no shared memory
  db.run(`UPDATE meta SET doc = '99' WHERE key = 'schema'`);
  db.close();
  expect(() => new SqliteStore(file)).toThrow(
    new Error(
      `the sandbox store ${file} has schema 99, this version reads 1: delete the file (the sandbox forgets its sessions) or use the version that wrote it`,
    ),
  );
  expect(fs.existsSync(`${file}.pid`)).toBe(false);
});
