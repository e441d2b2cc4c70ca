/**
 * Replays the recorded history of every workflow kind (test/fixtures/histories/*.json, written by
 * record-histories.test.ts from today's code) against today's workflow bundle: the code is
 * deterministic, run after run. Histories of older builds are not kept: a workflow is pinned to the
 * build that started it and never meets newer code (docs/decisions/019-every-worker-is-versioned.md).
 * Re-record after a change to the workflow code (`node scripts/record-histories.js`).
 */
import * as path from 'node:path';
import { Worker } from '@temporalio/worker';
import { readHistories, type RecordedHistory } from '../fixtures/histories/io';
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
  'payout_batch',
  'reconciler',
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
