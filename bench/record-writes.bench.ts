/**
 * A session's record writes alone (store/sessions.ts recordSession) on the embedded store, as `paysaga
 * dev` and the sessions benchmark run it (PGlite in its thread, over its socket): BENCH_N sessions of five
 * versions each, eight sessions at a time, a state of about 14 KiB, an event with every other version and
 * an audit entry with the third, as a card checkout writes them. Prints the wall time and this process's
 * CPU (every thread) per write. To compare two commits, run it from a worktree of each.
 *
 * Run: `npm run bench -- record-writes` (BENCH_N, default 600).
 */
import { DEFAULT_SETTINGS } from '../common/settings';
import { newSessionState, type SessionState } from '../common/session-input';
import type { PaysagaEvent } from '../common/events';
import type { OperationView } from '../common/views';
import { migrateStore, openStore } from '../store/database';
import { startEmbeddedStore } from '../store/embedded';
import { recordSession, type AuditEntry } from '../store/sessions';
import { machineLine, runBounded } from './support';

const hundredths = (x: number) => Math.round(x * 100) / 100;

const CREATED = '2026-11-01T00:00:00.000Z';
const VERSIONS = 5;
/** Stands for what a checkout's state carries (its snapshot, event log and signed bodies). */
const PAD = 'x'.repeat(12_000);

function stateOf(i: number, version: number): SessionState {
  const identity = {
    sessionId: `ps_${i}`,
    kind: 'card_checkout' as const,
    reference: `bench-${i}`,
    request: { money: { amount: 1_000, currency: 'RUB' } },
    settings: DEFAULT_SETTINGS,
  };
  return { ...newSessionState(identity, CREATED), version, pad: PAD } as SessionState;
}

export async function main(): Promise<void> {
  const n = Number(process.env.BENCH_N ?? 600);
  const database = await startEmbeddedStore();
  const store = openStore({ url: database.url, schema: 'record_writes', poolSize: 8 });
  try {
    await migrateStore(store);
    const cpuBefore = process.cpuUsage();
    const { wallMs } = await runBounded(n, 8, async (i) => {
      for (let version = 1; version <= VERSIONS; version++) {
        const sessionId = `ps_${i}`;
        const event = {
          id: `evt_${i}_${version}`,
          type: 'session.created',
          created: CREATED,
          sequence: version,
          session_id: sessionId,
          data: { sessionId, note: PAD.slice(0, 3_000) },
        } as PaysagaEvent;
        const audit = { seq: 1, receivedAt: CREATED, type: 'payment', via: 'webhook', outcome: 'applied' };
        await recordSession(store, {
          state: stateOf(i, version),
          summary: {
            phase: 'processing',
            final: false,
            needsAttention: false,
            amount: 1_000,
            currency: 'RUB',
            createdAt: CREATED,
          },
          operations: [{ id: 'pm_1', kind: 'payment', status: 'processing', amount: 1_000 } as OperationView],
          audit: version === 3 ? [audit as AuditEntry] : [],
          events: version % 2 ? [event] : [],
        });
      }
    });
    const cpu = process.cpuUsage(cpuBefore);
    const writes = n * VERSIONS;
    console.log(
      `${machineLine()}; ${writes} writes (${n} sessions x ${VERSIONS} versions), 8 sessions at once`,
    );
    console.table({
      'wall ms per write': { value: hundredths(wallMs / writes) },
      'process CPU ms per write (all threads)': {
        value: hundredths((cpu.user + cpu.system) / 1000 / writes),
      },
    });
  } finally {
    await store.close();
    await database.stop();
  }
}
