import { createHash } from 'node:crypto';
import { maskCardData } from '../provider/schemas/card';
import { MemoryStore, type SandboxStore } from './store';

/*
 * Idempotency keys (spec, Limits): per project, living 24 h (× timeScale). A key is bound to the request
 * it first came with (endpoint + canonical body). Only successful answers are kept: an error leaves the
 * key free, so a partner who retries after e.g. approving too early is not locked out (README, "Choices").
 */

export type IdempotencyLookup =
  | { kind: 'new' }
  | { kind: 'mismatch' }
  | { kind: 'in_flight' }
  | { kind: 'replay'; httpStatus: number; body: unknown };

export interface IdempotencyEntry {
  fingerprint: string;
  expiresAtMs: number;
  answer?: { httpStatus: number; body: unknown };
}

/** JSON with sorted keys, so a re-serialized identical request counts as the same request. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * A digest of the request, so the store never keeps card data even for a day. Card fields are masked
 * first (BIN + last 4, codes as `****`): an unkeyed hash of a PAN and CVV could be reversed by trying
 * every card of a BIN. Two requests differing only in the hidden digits count as the same request.
 */
export function requestFingerprint(endpoint: string, body: unknown): string {
  return createHash('sha256')
    .update(endpoint)
    .update('\0')
    .update(canonical(maskCardData(body)))
    .digest('hex');
}

export class IdempotencyStore {
  private readonly entries = new Map<string, IdempotencyEntry>();

  constructor(
    private readonly ttlMs: () => number,
    private readonly store: SandboxStore = new MemoryStore(),
  ) {}

  /** Answered keys of an earlier run that have not expired (a request in flight then never finished). */
  restore(saved: Map<string, unknown>, nowMs = Date.now()): void {
    for (const [id, value] of saved) {
      const e = value as IdempotencyEntry;
      if (e.answer && e.expiresAtMs > nowMs) this.entries.set(id, e);
      else this.store.remove('idempotency', id);
    }
  }

  /** Also the key in the store (JSON: any project id and key, no separator to collide with). */
  private id(projectId: string, key: string): string {
    return JSON.stringify([projectId, key]);
  }

  /** Looks the key up and, when it is new, reserves it for this request (in flight). */
  begin(projectId: string, key: string, fingerprint: string, nowMs = Date.now()): IdempotencyLookup {
    const id = this.id(projectId, key);
    const e = this.entries.get(id);
    if (e && e.expiresAtMs > nowMs) {
      if (e.fingerprint !== fingerprint) return { kind: 'mismatch' };
      if (!e.answer) return { kind: 'in_flight' };
      return { kind: 'replay', httpStatus: e.answer.httpStatus, body: structuredClone(e.answer.body) };
    }
    this.entries.set(id, { fingerprint, expiresAtMs: nowMs + this.ttlMs() });
    return { kind: 'new' };
  }

  complete(projectId: string, key: string, httpStatus: number, body: unknown): void {
    const id = this.id(projectId, key);
    const e = this.entries.get(id);
    if (!e) return;
    e.answer = { httpStatus, body: structuredClone(body) };
    // Only answered keys are kept: a reservation dies with the process that made it, like its request.
    this.store.put('idempotency', id, e);
  }

  /** The request failed: the key is free again. */
  abandon(projectId: string, key: string): void {
    this.entries.delete(this.id(projectId, key));
  }

  /** Live keys (expired ones are dropped on the way). */
  get size(): number {
    const now = Date.now();
    for (const [id, e] of this.entries)
      if (e.expiresAtMs <= now) {
        this.entries.delete(id);
        if (e.answer) this.store.remove('idempotency', id);
      }
    return this.entries.size;
  }
}
