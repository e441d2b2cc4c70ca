import { IdAllocator } from './ids';
import { IdempotencyStore } from './idempotency';
import { Ledger } from './ledger';
import type { OperationRecord, PaymentRecord, SessionRecord } from './model';
import { TokenStore } from './tokens';
import { CardVault } from './vault';

/** An event the service emitted (whether or not a webhook went out for it). */
export interface EmittedEvent {
  seq: number;
  at: string;
  type: string;
  projectId: string;
  sessionId: string;
  /** the webhook was handed to the dispatcher (webhooks on and a URL configured) */
  sent: boolean;
}

/** Everything the sandbox remembers; in memory only, gone when it stops. */
export class SandboxState {
  readonly ids = new IdAllocator();
  readonly sessions = new Map<string, SessionRecord>();
  /** operation id -> session id */
  readonly operations = new Map<string, string>();
  /** open 3-D Secure challenge id -> payment id */
  readonly challenges = new Map<string, string>();
  readonly vault = new CardVault();
  readonly tokens = new TokenStore();
  readonly ledger = new Ledger();
  readonly events: EmittedEvent[] = [];
  readonly idempotency: IdempotencyStore;

  constructor(idempotencyTtlMs: () => number) {
    this.idempotency = new IdempotencyStore(idempotencyTtlMs);
  }

  session(id: string, projectId?: string): SessionRecord | undefined {
    const s = this.sessions.get(id);
    return s && (projectId === undefined || s.projectId === projectId) ? s : undefined;
  }

  operation(id: string): { session: SessionRecord; op: OperationRecord } | undefined {
    const sessionId = this.operations.get(id);
    const session = sessionId === undefined ? undefined : this.sessions.get(sessionId);
    if (!session) return undefined;
    const op = [...session.payments, ...session.payouts].find((o) => o.id === id);
    return op ? { session, op } : undefined;
  }

  payment(id: string): { session: SessionRecord; payment: PaymentRecord } | undefined {
    const found = this.operation(id);
    return found && found.op.kind === 'payment' ? { session: found.session, payment: found.op } : undefined;
  }

  /** Counts of everything, to prove a refused request changed nothing. */
  stats(): Record<string, number> {
    let payments = 0;
    let payouts = 0;
    let moneyback = 0;
    for (const s of this.sessions.values()) {
      payments += s.payments.length;
      payouts += s.payouts.length;
      for (const p of s.payments) moneyback += p.moneyback.length;
    }
    return {
      sessions: this.sessions.size,
      payments,
      payouts,
      moneyback,
      cards: this.vault.size,
      recurringTokens: this.tokens.recurring.size,
      publicTokens: this.tokens.publicTokens.size,
      idempotencyKeys: this.idempotency.size,
      ledgerEntries: this.ledger.size,
      events: this.events.length,
    };
  }
}
