/**
 * `paysaga export` as a real process against a store written by the store's own write path
 * (recordSession): the window's sessions, refunds and events, oldest first, each once across many pages,
 * in CSV (RFC 4180 quoting) and JSON lines; rows outside the window left out; bad arguments refused by
 * name before anything is read.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { operationsOf } from '../../common/snapshot';
import { DEFAULT_SETTINGS } from '../../common/settings';
import { reason } from '../../common/reasons';
import { newSessionState, type SessionState } from '../../common/session-input';
import type { SessionInfo } from '../../provider/schemas';
import { recordSession } from '../../store/sessions';
import { runPaysaga } from '../helpers/cli-run';
import { testStore, type TestStore } from '../helpers/store';

jest.setTimeout(120_000);

const DAY = 86_400_000;
const START = Date.parse('2026-10-01T00:00:00Z');
const N = 1_203; // more than two pages of 500

let store: TestStore;
let dir: string;

/** A card checkout that succeeded on day `day`, every 7th with a refund the provider made. */
function checkout(i: number): SessionState {
  const created = new Date(START + Math.floor(i / 100) * DAY + (i % 100) * 1000).toISOString();
  const refunded = i % 7 === 0;
  const snapshot = {
    id: `ps_${100_000 + i}`,
    transaction_status: 'completed',
    updated_at: created.replace('Z', '000Z'),
    payments: [
      {
        id: `pm_${i}`,
        transaction_status: 'successful',
        sum_info: { sum: 1_000 + i, currency_code: 'rub' },
        ...(refunded
          ? {
              moneyback: [
                {
                  id: `rf_${i}`,
                  transaction_status: 'completed',
                  sum_info: { sum: 300, currency_code: 'rub' },
                },
              ],
            }
          : {}),
      },
    ],
  } as unknown as SessionInfo;
  const request = { money: { amount: 1_000 + i, currency: 'RUB' }, customerId: `c${i % 3}` };
  // a reference with a comma and a quote: CSV must quote it
  const reference = i === 5 ? 'order "5", special' : `order-${i}`;
  const identity = { sessionId: `ps_${100_000 + i}`, kind: 'card_checkout' as const, reference, request };
  const state: SessionState = {
    ...newSessionState({ ...identity, settings: DEFAULT_SETTINGS }, created),
    snapshot,
    providerPhase: 'succeeded',
    final: { phase: 'succeeded', at: created },
    eventSequence: 1,
    version: 3,
  };
  if (i !== FAILED) return state;
  const why = reason('provider_error', undefined, { providerCode: 'insufficient_funds' });
  return {
    ...state,
    providerPhase: 'failed',
    final: { phase: 'failed', at: created, reason: why },
    reason: why,
  };
}
/** The one session that failed (a reason in the export). */
const FAILED = 211;

beforeAll(async () => {
  store = await testStore();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paysaga-export-'));
  for (let i = 0; i < N; i++) {
    const state = checkout(i);
    await recordSession(store, {
      state,
      summary: {
        phase: 'succeeded',
        final: true,
        needsAttention: false,
        amount: 1_000 + i,
        currency: 'RUB',
        customerId: `c${i % 3}`,
        createdAt: state.createdAt,
        finalAt: state.createdAt,
      },
      operations: operationsOf(state.snapshot!),
      audit: [],
      events: [
        {
          id: `evt_${i}`,
          type: 'session.succeeded',
          created: state.createdAt,
          sequence: 1,
          session_id: state.sessionId,
          data: { sessionId: state.sessionId },
        } as never,
      ],
    });
  }
});
afterAll(async () => {
  await store?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const run = (args: string[]) => runPaysaga(['export', ...args], store.env);

test('sessions of a window as CSV: every row once, oldest first, quoted where needed', async () => {
  // days 0..9 hold 100 sessions each, day 10..12 the rest; the window is days 2 to 12 (exclusive)
  const r = await run(['sessions', '--from', '2026-10-03', '--to', '2026-10-13']);
  expect(r.code).toBe(0);
  const lines = r.stdout.trimEnd().split('\n');
  expect(lines[0]).toBe(
    'session_id,kind,reference,phase,final,reason,reason_provider_code,reason_detail,needs_attention,' +
      'currency,amount,held,captured,refunded,' +
      'charged_back,paid_out,net,customer_id,created_at,final_at,version',
  );
  const ids = lines.slice(1).map((l) => l.split(',')[0]);
  expect(ids).toHaveLength(1_000);
  expect(ids[0]).toBe('ps_100200');
  expect(ids[ids.length - 1]).toBe('ps_101199');
  expect(new Set(ids).size).toBe(ids.length);
  const refunded = lines.find((l) => l.startsWith('ps_100203,'))!; // 203 = 7 * 29
  expect(refunded).toContain(',RUB,1203,0,1203,300,0,0,903,c2,');
  // A failed session's reason: its code, the provider's code and the words, each a column.
  const failed = lines.find((l) => l.startsWith(`ps_${100_000 + FAILED},`))!;
  expect(failed.split(',').slice(3, 8)).toEqual([
    'failed',
    'true',
    'provider_error',
    'insufficient_funds',
    '',
  ]);
  expect(r.stderr).toContain('paysaga export: 1000 sessions from 2026-10-03T00:00:00.000Z');

  const early = await run(['sessions', '--from', '2026-10-01', '--to', '2026-10-02']);
  expect(early.stdout).toContain('ps_100005,card_checkout,"order ""5"", special",succeeded,true,');
});

test('refunds and events as JSON lines, to a file', async () => {
  const out = path.join(dir, 'refunds.jsonl');
  const r = await run(['refunds', '--from', '2020-01-01', '--format', 'jsonl', '--out', out]);
  expect(r.code).toBe(0);
  const refunds = fs
    .readFileSync(out, 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l));
  expect(refunds).toHaveLength(Math.ceil(N / 7));
  expect(refunds[0]).toMatchObject({
    refund_id: 'rf_0',
    session_id: 'ps_100000',
    session_reference: 'order-0',
    status: 'completed',
    amount: 300,
  });
  expect(new Set(refunds.map((x) => x.refund_id)).size).toBe(refunds.length);

  const events = await run(['events', '--from', '2026-10-01', '--format', 'jsonl']);
  const rows = events.stdout
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l));
  expect(rows).toHaveLength(N);
  expect(rows.map((e) => e.seq)).toEqual([...rows.map((e) => e.seq)].sort((a, b) => a - b));
  expect(rows[0]).toMatchObject({ event_id: 'evt_0', type: 'session.succeeded', subject: 'ps_100000' });
});

test('bad arguments are refused by name', async () => {
  const noFrom = await run(['sessions']);
  expect(noFrom.code).not.toBe(0);
  expect(noFrom.stderr).toContain("required option '--from <time>' not specified");
  const badTime = await run(['sessions', '--from', 'yesterday']);
  expect(badTime.stderr).toContain("option '--from <time>' argument 'yesterday' is invalid");
  const badKind = await run(['payments', '--from', '2026-10-01']);
  expect(badKind.stderr).toContain("value 'payments' is invalid for argument 'records'");
  const backwards = await run(['sessions', '--from', '2026-10-05', '--to', '2026-10-01']);
  expect(backwards.stderr).toContain('--from must be before --to');
});
