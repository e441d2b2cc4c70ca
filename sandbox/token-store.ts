import type { FundingSource } from './model';
import { MemoryStore, type SandboxStore } from './store';

/** Recurring tokens and public tokens (spec: recurring_token_info, public_token). */

export interface RecurringTokenRecord {
  token: string;
  /** the project it was obtained on: payments use it only there, payouts from any project (rule 8) */
  projectId: string;
  source: FundingSource;
  active: boolean;
  createdAtMs: number;
  /** informational expiry, never enforced */
  expiresAtMs: number;
}

export interface PublicTokenRecord {
  token: string;
  projectId: string;
  createdAtMs: number;
  expiresAtMs: number;
  /** set by the one operation the token allows */
  usedAtMs?: number;
  cardTokenize?: { allowTokenization: boolean; lang?: string };
  paymentForm?: { sessionId: string; showAutopayOption: boolean; lang?: string };
  fpsWidget?: Record<string, unknown>;
}

/** The maps are for reading; changes go through the methods, which tell the store. */
export class TokenStore {
  readonly recurring = new Map<string, RecurringTokenRecord>();
  readonly publicTokens = new Map<string, PublicTokenRecord>();
  /** payment_form_config.session_id values already used (rule 1) */
  readonly paymentFormSessions = new Map<string, string>();

  constructor(private readonly store: SandboxStore = new MemoryStore()) {}

  addRecurring(record: RecurringTokenRecord): void {
    this.recurring.set(record.token, record);
    this.store.put('recurring_tokens', record.token, record);
  }

  disableRecurring(record: RecurringTokenRecord): void {
    record.active = false;
    this.store.put('recurring_tokens', record.token, record);
  }

  addPublic(record: PublicTokenRecord): void {
    this.publicTokens.set(record.token, record);
    if (record.paymentForm) this.paymentFormSessions.set(record.paymentForm.sessionId, record.token);
    this.store.put('public_tokens', record.token, record);
  }

  /** The token's one operation was accepted. */
  usePublic(record: PublicTokenRecord, atMs = Date.now()): void {
    record.usedAtMs = atMs;
    this.store.put('public_tokens', record.token, record);
  }

  /** The tokens of an earlier run. */
  restore(recurring: Map<string, unknown>, publicTokens: Map<string, unknown>): void {
    for (const r of recurring.values())
      this.recurring.set((r as RecurringTokenRecord).token, r as RecurringTokenRecord);
    for (const r of publicTokens.values()) {
      const record = r as PublicTokenRecord;
      this.publicTokens.set(record.token, record);
      if (record.paymentForm) this.paymentFormSessions.set(record.paymentForm.sessionId, record.token);
    }
  }
}
