/**
 * Replays the recorded history of every session kind (test/fixtures/histories/*.json, written by
 * record-histories.test.ts, and the ones recorded before the `lean-history`, `write-after-verdict`,
 * `held-status`, `held-record`, `shared-timer` and `held-keys` patches in before-lean/, before-verdict/,
 * before-held/, before-held-record/, before-shared-timer/ and before-held-keys/)
 * against today's workflow code. A change that would break running
 * sessions (a command added, removed or reordered) fails here: use `patched()` for it, or re-record
 * when the break is intended and no session of the old code can still be running.
 */
import * as path from 'node:path';
import { Worker } from '@temporalio/worker';
import { HISTORIES_DIR, readHistories, type RecordedHistory } from '../fixtures/histories/io';
import { sharedWorkflowBundlePath } from '../helpers/temporal';
import { TEST_CARD } from '../../sandbox/test-cards';

/** Every kind the workflows implement; each must have a recorded history. */
const KINDS = [
  'card_checkout',
  'card_checkout_polling',
  'three_ds_checkout',
  'hold_partial_finalize',
  'fps_payment',
  'fps_binding',
  'payment_form',
  'recurring_payment',
  'subscription',
  'payout',
  'payout_token',
  'identity_check',
  'refund',
  'late_event',
];

jest.setTimeout(60_000);

async function replayAll(
  histories: RecordedHistory[],
  bundle: { workflowBundle: { codePath: string } } | { workflowsPath: string },
): Promise<Map<string, { name: string; message: string } | undefined>> {
  const errors = new Map<string, { name: string; message: string } | undefined>();
  // Runs of one session share its id (a refund, then a late event): each replays under its own.
  const results = Worker.runReplayHistories(
    bundle,
    histories.map((h) => ({ workflowId: `${h.workflowId}/${h.kind}`, history: h.history })),
  );
  for await (const r of results) {
    errors.set(
      r.workflowId.split('/')[1] ?? r.workflowId,
      r.error ? { name: r.error.name, message: r.error.message } : undefined,
    );
  }
  return errors;
}

describe('replay of recorded histories', () => {
  const histories = readHistories();

  it('has a recorded history of every kind', () => {
    expect(histories.map((h) => h.kind).sort()).toEqual([...KINDS].sort());
  });

  it('every history replays against the current workflow code without nondeterminism', async () => {
    const errors = await replayAll(histories, { workflowBundle: { codePath: sharedWorkflowBundlePath() } });
    expect(errors.size).toBe(histories.length);
    const failed = [...errors].filter(([, e]) => e !== undefined);
    expect(failed).toEqual([]);
  });

  it('the recorded histories hold no card data either', () => {
    for (const h of histories) {
      const decoded = (h.fileText.match(/"data": ?"[^"]*"/g) ?? [])
        .map((d) => Buffer.from(d.replace(/^"data": ?"/, '').slice(0, -1), 'base64').toString('utf8'))
        .join('\n');
      expect(decoded).toContain(h.workflowId.startsWith('ps_') ? h.workflowId : '');
      for (const needle of [
        TEST_CARD.visa,
        TEST_CARD.visa3ds,
        TEST_CARD.mastercard,
        'card_code',
        'card_number',
      ])
        expect(`${h.fileText}\n${decoded}`).not.toContain(needle);
    }
  });

  // Sessions started before a patch of the session workflow keep running after an upgrade: their
  // histories, recorded by the code of that time, still replay as they ran. before-lean/: before
  // `lean-history` (workflows/session/visibility.ts); before-verdict/: before `write-after-verdict`
  // (workflows/session-recorder.ts); before-held/: before `held-status` (workflows/session/visibility.ts);
  // before-held-record/: before `held-record` (workflows/session-recorder.ts); before-shared-timer/: before
  // `shared-timer` (workflows/session/timer.ts); before-held-keys/: before `held-keys`
  // (workflows/session/inbox.ts).
  it.each([
    'before-lean',
    'before-verdict',
    'before-held',
    'before-held-record',
    'before-shared-timer',
    'before-held-keys',
  ])('every history recorded %s replays too', async (dir) => {
    const before = readHistories(path.join(HISTORIES_DIR, dir));
    expect(before.map((h) => h.kind).sort()).toEqual([...KINDS].sort());
    const errors = await replayAll(before, { workflowBundle: { codePath: sharedWorkflowBundlePath() } });
    expect(errors.size).toBe(before.length);
    expect([...errors].filter(([, e]) => e !== undefined)).toEqual([]);
  });

  /*
   * The replay is a real check: code that issues different commands for the same history fails.
   * A stand-in checkoutWorkflow that starts with a timer instead of the recorded activity/condition.
   */
  it('reports nondeterminism when the workflow code changed incompatibly (control)', async () => {
    const checkout = histories.filter((h) => h.kind === 'card_checkout');
    const errors = await replayAll(checkout, {
      workflowsPath: path.join(__dirname, '..', 'fixtures', 'histories', 'changed-workflows.ts'),
    });
    // The SDK's class for it: its words are for people.
    expect(errors.get('card_checkout')?.name).toBe('DeterminismViolationError');
  });
});
