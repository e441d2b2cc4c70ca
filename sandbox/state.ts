import { RequestLog } from './request-log';
import { IdAllocator, type IdPrefix } from './ids';
import { IdempotencyStore } from './idempotency';
import { Ledger } from './ledger';
import type { OperationRecord, PaymentRecord, SessionRecord } from './model';
import { MemoryStore, type SandboxStore, type StoredState } from './store';
import { TokenStore } from './token-store';
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

/**
 * Everything the sandbox remembers. The maps are the working copy; every change is also handed to the
 * store (in memory: nowhere; in a data folder: SQLite), which writes it when the unit of work commits.
 */
export class SandboxState {
  readonly ids: IdAllocator;
  readonly sessions = new Map<string, SessionRecord>();
  /** operation id -> session id (derived from the sessions) */
  readonly operations = new Map<string, string>();
  /** open 3-D Secure challenge id -> payment id (derived from the payments) */
  readonly challenges = new Map<string, string>();
  readonly vault: CardVault;
  readonly tokens: TokenStore;
  readonly ledger: Ledger;
  readonly events: EmittedEvent[] = [];
  /** Every API call, newest kept (not persisted: a restart starts a new log). */
  readonly requests = new RequestLog();
  readonly idempotency: IdempotencyStore;

  constructor(
    idempotencyTtlMs: () => number,
    readonly store: SandboxStore = new MemoryStore(),
  ) {
    this.ids = new IdAllocator(undefined, store);
    this.vault = new CardVault(store);
    this.tokens = new TokenStore(store);
    this.ledger = new Ledger(store);
    this.idempotency = new IdempotencyStore(idempotencyTtlMs, store);
  }

  session(id: string, projectId?: string): SessionRecord | undefined {
    const s = this.sessions.get(id);
    return s && (projectId === undefined || s.projectId === projectId) ? s : undefined;
  }

  addSession(session: SessionRecord): void {
    this.sessions.set(session.id, session);
    this.saveSession(session);
  }

  /** The session (with its operations and refunds) changed: it is written at the next commit. */
  saveSession(session: SessionRecord): void {
    this.store.put('sessions', session.id, session);
  }

  recordEvent(event: Omit<EmittedEvent, 'seq'>): EmittedEvent {
    const e = { seq: this.events.length + 1, ...event };
    this.events.push(e);
    this.store.append('events', e.seq, e);
    return e;
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

  /** Loads what an earlier run stored, and rebuilds the indexes derived from it. */
  restore(stored: StoredState): void {
    const c = stored.collections;
    this.ids.restore(c.meta.get('ids') as Partial<Record<IdPrefix, number>> | undefined);
    for (const value of c.sessions.values()) {
      const session = value as SessionRecord;
      this.sessions.set(session.id, session);
      for (const op of [...session.payments, ...session.payouts]) {
        this.operations.set(op.id, session.id);
        if (op.kind === 'payment' && op.challengeId) this.challenges.set(op.challengeId, op.id);
      }
    }
    this.vault.restore(c.cards, c.card_refs);
    this.tokens.restore(c.recurring_tokens, c.public_tokens);
    this.idempotency.restore(c.idempotency);
    this.ledger.restore(stored.logs.ledger);
    for (const e of stored.logs.events) this.events.push(e as EmittedEvent);
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
