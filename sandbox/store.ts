/*
 * Where the sandbox keeps what it remembers. The in-memory model (SandboxState, the scheduler, the
 * webhook dispatcher) stays the working copy; a store gets every change as it is made and writes the
 * changes of one unit of work (an API call, a payer's action, a scheduled step, a webhook attempt) in
 * one transaction when commit() is called, before the sandbox answers or sends anything.
 *
 * MemoryStore keeps nothing (tests start many sandboxes); SqliteStore (sqlite-store.ts) keeps a file in
 * the data folder, so a restarted sandbox continues where it stopped.
 */

/** Records kept by key: a later put replaces the earlier value. */
export const COLLECTIONS = [
  'meta',
  'projects',
  'sessions',
  'cards',
  'card_refs',
  'recurring_tokens',
  'public_tokens',
  'idempotency',
  'jobs',
  'webhook_deliveries',
] as const;
export type Collection = (typeof COLLECTIONS)[number];

/** Append-only logs, read back in sequence order. */
export const LOGS = ['ledger', 'events', 'webhook_log'] as const;
export type Log = (typeof LOGS)[number];

/** Everything a store held when it was opened, parsed. */
export interface StoredState {
  collections: Record<Collection, Map<string, unknown>>;
  logs: Record<Log, unknown[]>;
}

export interface SandboxStore {
  /** true when committed changes survive the process */
  readonly durable: boolean;
  /** Where the data lives, for messages ("memory" for the in-memory store). */
  readonly location: string;
  /**
   * The record under `key` is now `value`. The value is serialized (JSON) at commit time, so a live
   * object may be given once and changed afterwards: its state at commit is what is written.
   */
  put(collection: Collection, key: string, value: unknown): void;
  remove(collection: Collection, key: string): void;
  append(log: Log, seq: number, value: unknown): void;
  /** Drops the entries of `log` up to and including `seq` (bounded logs). */
  trim(log: Log, uptoSeq: number): void;
  /** Writes every change since the last commit in one transaction; nothing to write: a no-op. Throws when the write fails (the changes stay pending). */
  commit(): void;
  /** What the store holds (empty for a new one). */
  load(): StoredState;
  /** Commits what is pending and releases the file. */
  close(): void;
}

export function emptyStoredState(): StoredState {
  return {
    collections: Object.fromEntries(COLLECTIONS.map((c) => [c, new Map<string, unknown>()])) as Record<
      Collection,
      Map<string, unknown>
    >,
    logs: Object.fromEntries(LOGS.map((l) => [l, [] as unknown[]])) as Record<Log, unknown[]>,
  };
}

/** Keeps nothing: the sandbox forgets everything when it stops. */
export class MemoryStore implements SandboxStore {
  readonly durable = false;
  readonly location = 'memory';
  put(): void {}
  remove(): void {}
  append(): void {}
  trim(): void {}
  commit(): void {}
  load(): StoredState {
    return emptyStoredState();
  }
  close(): void {}
}
