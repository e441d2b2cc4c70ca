import { timestamp } from './clock';
import { MemoryStore, type SandboxStore } from './store';

/**
 * Every money movement, append-only. hold: funds frozen on the payer's card; capture: held funds charged;
 * release: held funds let go; charge: one-step debit (FPS, FPS-account token); payout: money to a recipient;
 * refund / chargeback: money back to the payer. Tests read it to prove nothing moved twice.
 */
export type LedgerKind = 'hold' | 'capture' | 'release' | 'charge' | 'payout' | 'refund' | 'chargeback';

export interface LedgerEntry {
  seq: number;
  at: string;
  projectId: string;
  sessionId: string;
  operationId: string;
  /** the moneyback record of a refund or chargeback */
  refundId?: string;
  kind: LedgerKind;
  amount: number;
  currency: string;
}

export type LedgerInput = Omit<LedgerEntry, 'seq' | 'at'>;

export class Ledger {
  private readonly entries: LedgerEntry[] = [];

  constructor(private readonly store: SandboxStore = new MemoryStore()) {}

  record(entry: LedgerInput): LedgerEntry {
    if (!Number.isInteger(entry.amount) || entry.amount <= 0)
      throw new Error(`ledger: bad amount ${entry.amount}`);
    const e = { seq: this.entries.length + 1, at: timestamp(), ...entry };
    this.entries.push(e);
    this.store.append('ledger', e.seq, e);
    return e;
  }

  /** The entries of an earlier run, in order. */
  restore(saved: readonly unknown[]): void {
    for (const e of saved) this.entries.push(e as LedgerEntry);
  }

  list(filter: { sessionId?: string; projectId?: string } = {}): LedgerEntry[] {
    return this.entries
      .filter(
        (e) =>
          (filter.sessionId === undefined || e.sessionId === filter.sessionId) &&
          (filter.projectId === undefined || e.projectId === filter.projectId),
      )
      .map((e) => ({ ...e }));
  }

  /** Sum per kind over the given entries: what the payer lost, the recipient got, etc. */
  static totals(entries: readonly LedgerEntry[]): Record<LedgerKind, number> {
    const t: Record<LedgerKind, number> = {
      hold: 0,
      capture: 0,
      release: 0,
      charge: 0,
      payout: 0,
      refund: 0,
      chargeback: 0,
    };
    for (const e of entries) t[e.kind] += e.amount;
    return t;
  }

  get size(): number {
    return this.entries.length;
  }
}
