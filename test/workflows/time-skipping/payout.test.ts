/**
 * The payout's process on the time-skipping server with a fake provider: the workflow sends
 * start/transfer, the partner approves or cancels, and an approval deadline cancels what nobody decided.
 */
import { approveUpdate, cancelUpdate } from '../../../common/messages';
import type { StartSpec } from '../../../common/session-input';
import { opened, succeeded } from '../../helpers/fake-provider';
import { announced, HOUR, MINUTE, useKindWorker } from '../../helpers/kind-worker';

jest.setTimeout(60_000);
const kind = useKindWorker('payout');
const transfer: StartSpec = {
  by: 'workflow',
  operation: 'transfer',
  body: { sum_info: { sum: 5_000, currency_code: 'rub' }, payout_info: { type: 'recurring_token' } },
};
const manual = (deadlineMs = HOUR) => ({ approval: { mode: 'manual' as const, deadlineMs } });

it('approved by the partner: paid out', async () => {
  const { id, provider, t0, handle } = await kind.start({
    initial: opened,
    start: transfer,
    settings: manual(),
  });
  await kind.reaches(handle, 'awaiting_approval');
  await handle.executeUpdate(approveUpdate, { args: [{}] });
  provider.at(id, t0 + 2 * MINUTE, succeeded);

  const state = await kind.result(handle);
  expect(state.final?.phase).toBe('succeeded');
  expect([provider.count('startTransfer'), provider.count('approve')]).toEqual([1, 1]);
  expect(announced(provider, id)).toEqual([
    'session.created',
    'session.awaiting_approval',
    'session.succeeded',
  ]);
});

it('canceled by the partner: canceled, nothing paid', async () => {
  const { handle, provider } = await kind.start({ initial: opened, start: transfer, settings: manual() });
  await kind.reaches(handle, 'awaiting_approval');
  await handle.executeUpdate(cancelUpdate, { args: [{}] });

  const state = await kind.result(handle);
  expect(state.final?.phase).toBe('canceled');
  expect(provider.count('approve')).toBe(0);
});

it('nobody decides within the deadline: canceled at the provider, with the reason', async () => {
  const { handle, provider, t0 } = await kind.start({
    initial: opened,
    start: transfer,
    settings: manual(20 * MINUTE),
  });
  const state = await kind.result(handle);
  expect(state.final).toMatchObject({
    phase: 'canceled',
    reason: { code: 'decision_deadline', detail: 'no approve decision in time' },
  });
  expect(provider.calls.find((c) => c.name === 'cancel')!.atMs - t0).toBeGreaterThanOrEqual(20 * MINUTE);
});
