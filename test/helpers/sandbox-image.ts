import { SandboxState } from '../../sandbox/state';
import { SqliteStore } from '../../sandbox/sqlite-store';

/*
 * What a sandbox remembers, as plain JSON, to compare a running sandbox with what its data folder gives
 * back: sessions with operations and refunds, tokens, cards, ledger, events, answered idempotency keys,
 * id counters and the pending jobs and webhook deliveries of the file.
 */

export interface SandboxImage {
  sessions: unknown[];
  recurringTokens: unknown[];
  publicTokens: unknown[];
  cards: unknown[];
  ledger: unknown[];
  events: unknown[];
  stats: Record<string, number>;
  /** the id counters (a restored sandbox continues above them) */
  nextIds: Record<string, number> | null;
}

const json = (v: unknown): unknown => JSON.parse(JSON.stringify(v));
const byKey = <T>(m: Map<string, T>) =>
  [...m.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, v]) => json(v));

export function stateImage(state: SandboxState): SandboxImage {
  const cardIds = new Set<string>();
  for (const s of state.sessions.values())
    for (const op of [...s.payments, ...s.payouts])
      if (op.instrument.kind === 'card') cardIds.add(op.instrument.cardId);
  for (const t of state.tokens.recurring.values()) if (t.source.kind === 'card') cardIds.add(t.source.cardId);
  return {
    sessions: byKey(state.sessions),
    recurringTokens: byKey(state.tokens.recurring),
    publicTokens: byKey(state.tokens.publicTokens),
    cards: [...cardIds].sort().map((id) => json(state.vault.get(id) ?? null)),
    ledger: json(state.ledger.list()) as unknown[],
    events: json(state.events) as unknown[],
    stats: state.stats(),
    nextIds: state.ids.peek(),
  };
}

/** The state a sandbox started on `file` would begin with (the file must not be open elsewhere). */
export function storedImage(file: string): SandboxImage & { jobs: number; deliveries: number } {
  const store = new SqliteStore(file);
  try {
    const stored = store.load();
    const state = new SandboxState(() => 24 * 3600 * 1000, store);
    state.restore(stored);
    return {
      ...stateImage(state),
      nextIds: (stored.collections.meta.get('ids') as Record<string, number> | undefined) ?? null,
      jobs: stored.collections.jobs.size,
      deliveries: stored.collections.webhook_deliveries.size,
    };
  } finally {
    store.close();
  }
}
