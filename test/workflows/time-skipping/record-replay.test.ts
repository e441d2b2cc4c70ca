/**
 * A session's history replays from its first event while its record's writes (the recordSession
 * activity, workflows/session/recorder.ts) are under way as the partner's Updates arrive. Eight card
 * checkouts on a store that takes 0-200 ms a write: half approved by the partner, half holds finalized
 * by the partner and then refunded twice at once; then every history is replayed against the same code.
 *
 * A workflow task that times out while a write is under way (a killed worker) is not rebuilt here: the
 * time-skipping server, made to expire tasks that way, stalls sessions whatever the recorder does. The
 * reliability suite kills workers under load and replays every history instead.
 */
import { Worker } from '@temporalio/worker';
import { approveUpdate, finalizeUpdate, refundUpdate } from '../../../common/messages';
import { awaitingApproval, held, succeeded } from '../../helpers/fake-provider';
import { MINUTE, useKindWorker } from '../../helpers/kind-worker';
import { sharedWorkflowBundlePath } from '../../helpers/temporal';

jest.setTimeout(90_000);
const kind = useKindWorker('card_checkout');
const manual = { mode: 'manual' as const, deadlineMs: 60 * MINUTE };

it('replays every session after decisions and refunds that met writes under way', async () => {
  const runs = await Promise.all(
    Array.from({ length: 8 }, async (_, i) => {
      const approving = i % 2 === 0;
      const run = await kind.start({
        initial: (id) => (approving ? awaitingApproval(id, 5_000) : held(id, 5_000)),
        settings: { approval: manual, finalization: manual },
      });
      const { id, provider, handle } = run;
      provider.recordDelayMs = () => Math.floor(Math.random() * 200);
      if (approving) {
        await kind.reaches(handle, 'awaiting_approval');
        await handle.executeUpdate(approveUpdate, { args: [{}] });
        provider.at(id, (await kind.env.currentTimeMs()) + MINUTE, succeeded);
        return run;
      }
      await kind.reaches(handle, 'awaiting_finalization');
      await handle.executeUpdate(finalizeUpdate, { args: [{}] });
      await kind.reaches(handle, 'succeeded');
      await Promise.all(
        [1, 2].map((n) =>
          handle.executeUpdate(refundUpdate, { args: [{ reference: `rf-${n}`, amount: 100 }] }),
        ),
      );
      return run;
    }),
  );
  // Time skips while a result is awaited: the store is quick again, and every write done, before the
  // sessions are followed to their end.
  for (const { provider } of runs) provider.recordDelayMs = () => 0;
  while (runs.some(({ provider }) => provider.writesUnderWay > 0))
    await new Promise((r) => setTimeout(r, 20));
  const histories = [];
  for (const { id, handle } of runs) {
    const state = await kind.result(handle);
    expect(state.final?.phase).toBe('succeeded');
    if (state.refunds.length) expect(state.refunds.map((r) => r.status)).toEqual(['succeeded', 'succeeded']);
    histories.push({ workflowId: id, history: await handle.fetchHistory() });
  }
  const failures: string[] = [];
  for await (const r of Worker.runReplayHistories(
    { workflowBundle: { codePath: sharedWorkflowBundlePath() } },
    histories,
  ))
    if (r.error) failures.push(`${r.workflowId}: ${r.error.message}`);
  expect(failures).toEqual([]);
});
