import { randomBytes } from 'node:crypto';
import { MemoryStore, type SandboxStore } from './store';

/** Identifier shapes of the spec: `ps_<number>`, `pm_<number>`, `po_<number>`, `rf_<number>`. */
export type IdPrefix = 'ps' | 'pm' | 'po' | 'rf';

/**
 * Counters advance only when a record is really created, so a refused request leaves no gap:
 * tests can tell from the next id that nothing happened in between.
 */
export class IdAllocator {
  private readonly next: Record<IdPrefix, number>;

  /**
   * Ids are unique across sandbox restarts and instances, like the real service's: partners key
   * durable state on them (paysaga's workflow id is the session id), so a restarted sandbox must
   * never hand out an id an earlier one did. The base is the start time in ms, times 1000.
   */
  constructor(
    base = Date.now() * 1000 + Math.floor(Math.random() * 1000),
    private readonly store: SandboxStore = new MemoryStore(),
  ) {
    this.next = { ps: base, pm: base, po: base, rf: base };
  }

  take(prefix: IdPrefix): string {
    const id = `${prefix}_${this.next[prefix]++}`;
    this.store.put('meta', 'ids', this.next);
    return id;
  }

  /** Counters of an earlier run: never go back below them (a fresh base may already be above). */
  restore(saved: Partial<Record<IdPrefix, number>> | undefined): void {
    if (!saved) return;
    for (const prefix of Object.keys(this.next) as IdPrefix[]) {
      const n = saved[prefix];
      if (typeof n === 'number' && n > this.next[prefix]) this.next[prefix] = n;
    }
  }

  peek(): Record<IdPrefix, number> {
    return { ...this.next };
  }
}

/** Opaque tokens (shape not shown in the spec): a prefix and 24 hex digits. */
export function opaqueToken(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString('hex')}`;
}

/** Digits for retrieval reference numbers, authorization codes, FPS transaction ids. */
export function randomDigits(n: number): string {
  let out = '';
  for (const b of randomBytes(n)) out += String(b % 10);
  return out;
}
