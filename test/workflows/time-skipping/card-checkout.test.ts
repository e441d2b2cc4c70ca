/**
 * The card checkout's process on the time-skipping server with a fake provider: the partner's decisions
 * (approve, finalize), a decision deadline, and a refund after the result. Seconds, not minutes; the
 * full-stack tests (test/workflows/card-checkout.test.ts) show the same against the sandbox.
 */
import { approveUpdate, finalizeUpdate, refundUpdate } from '../../../common/messages';
import { DEFAULT_SETTINGS } from '../../../common/settings';
import { awaitingApproval, held, succeeded, threeDs } from '../../helpers/fake-provider';
import { announced, HOUR, MINUTE, useKindWorker } from '../../helpers/kind-worker';

jest.setTimeout(60_000);
const kind = useKindWorker('card_checkout');
const manual = (deadlineMs = HOUR) => ({ mode: 'manual' as const, deadlineMs });

it('a manual approval: approved by the partner, then the provider succeeds', async () => {
  const { id, provider, t0, handle } = await kind.start({
    initial: (id) => awaitingApproval(id, 5_000),
    settings: { approval: manual() },
  });
  await kind.reaches(handle, 'awaiting_approval');
  await handle.executeUpdate(approveUpdate, { args: [{}] });
  provider.at(id, t0 + 5 * MINUTE, succeeded);

  const state = await kind.result(handle);
  expect(state.final?.phase).toBe('succeeded');
  expect(provider.count('approve')).toBe(1);
  expect(announced(provider, id)).toEqual([
    'session.created',
    'session.awaiting_approval',
    'session.succeeded',
  ]);
});

it('a hold finalized by the partner: charged once', async () => {
  const { id, provider, handle } = await kind.start({
    initial: (id) => held(id, 5_000),
    settings: { finalization: manual() },
  });
  await kind.reaches(handle, 'awaiting_finalization');
  const view = await handle.executeUpdate(finalizeUpdate, { args: [{}] });
  expect(view.phase).toBe('succeeded');

  const state = await kind.result(handle);
  expect(state.final?.phase).toBe('succeeded');
  expect(provider.count('finalize')).toBe(1);
  expect(announced(provider, id)).toContain('session.awaiting_finalization');
});

it('no approval within the deadline: canceled at the provider, with the reason', async () => {
  const { provider, t0, handle } = await kind.start({
    initial: (id) => awaitingApproval(id, 5_000),
    settings: { approval: manual(30 * MINUTE) },
  });
  const state = await kind.result(handle);
  expect(state.final).toMatchObject({
    phase: 'canceled',
    reason: { code: 'decision_deadline', detail: 'no approve decision in time' },
  });
  const [cancel] = provider.calls.filter((c) => c.name === 'cancel');
  expect(cancel!.atMs - t0).toBeGreaterThanOrEqual(30 * MINUTE);
});

it('a refund after the result: sent once under its reference, announced once', async () => {
  const { id, provider, t0, handle } = await kind.start({ initial: (id) => awaitingApproval(id, 5_000) });
  provider.at(id, t0 + MINUTE, succeeded);
  await kind.env.sleep(5 * MINUTE); // time skips: the session polls and finds the result
  await kind.reaches(handle, 'succeeded');
  const refund = { reference: 'refund-1', amount: 2_000 };
  const [first, again] = [
    await handle.executeUpdate(refundUpdate, { args: [refund] }),
    await handle.executeUpdate(refundUpdate, { args: [refund] }),
  ];
  expect([first.created, again.created]).toEqual([true, false]);

  const state = await kind.result(handle);
  expect(state.refunds).toEqual([expect.objectContaining({ reference: 'refund-1', status: 'succeeded' })]);
  expect(provider.count('refund')).toBe(1);
  expect(announced(provider, id).filter((t) => t === 'session.refunded')).toHaveLength(1);
});

it("waiting for the payer with webhooks on: the first look at the payer's cap, then none sooner", async () => {
  const { id, provider, t0, handle } = await kind.start({
    initial: (id) => threeDs(id, 5_000),
    settings: {
      polling: { webhooks: true, lateAfterMs: 30_000, initialMs: 2_000, maxMs: MINUTE, factor: 2 },
    },
  });
  await kind.reaches(handle, 'awaiting_payer');
  provider.at(id, t0 + 5 * MINUTE, succeeded); // its webhook is lost: only a look finds it

  const state = await kind.result(handle);
  expect(state.final?.phase).toBe('succeeded');
  const looks = provider.calls
    .filter((c) => c.name === 'getState' && c.sessionId === id)
    .map((c) => c.atMs - t0);
  // A person is not late by `lateAfterMs` (30 s): the first look comes at the payer's cap (4 × maxMs),
  // and a look that finds nothing new proves no webhook was lost, so none comes sooner after it.
  expect(looks[0]).toBeGreaterThanOrEqual(4 * MINUTE);
  const gaps = looks.slice(1).map((at, i) => at - looks[i]!);
  expect(Math.min(...gaps)).toBeGreaterThanOrEqual(4 * MINUTE - 1_000);
  expect(looks.length).toBeLessThanOrEqual(2);
});

it("a payer who takes long: a look every payer's cap, until the deadline", async () => {
  // The default policy's cap (`maxMs` one minute): a look every 4 × `maxMs` (4 min) while the payer acts.
  const { id, provider, t0, handle } = await kind.start({
    initial: (id) => threeDs(id, 5_000),
    settings: { polling: { maxMs: DEFAULT_SETTINGS.polling.maxMs } },
  });
  await kind.reaches(handle, 'awaiting_payer');
  provider.at(id, t0 + 14 * MINUTE, succeeded); // its webhook and the payer's return are lost

  const state = await kind.result(handle);
  expect(state.final?.phase).toBe('succeeded');
  const looks = provider.calls
    .filter((c) => c.name === 'getState' && c.sessionId === id)
    .map((c) => c.atMs - t0);
  const beforeSuccess = looks.filter((at) => at < 14 * MINUTE);
  // With a one-minute cap this was 14 looks in 14 minutes; every one found the payer still acting.
  expect(beforeSuccess.length).toBeLessThanOrEqual(3);
  expect(beforeSuccess[0]).toBeGreaterThanOrEqual(4 * MINUTE);
  const gaps = beforeSuccess.slice(1).map((at, i) => at - beforeSuccess[i]!);
  expect(Math.min(...gaps)).toBeGreaterThanOrEqual(4 * MINUTE - 1_000);
  expect(Math.max(...gaps)).toBeLessThanOrEqual(4 * MINUTE + 1_000);
  // The payer's deadline (15 min) still ends in a look that finds the success.
  expect(looks.some((at) => at >= 14 * MINUTE && at <= 15 * MINUTE + 5_000)).toBe(true);
});

it("a policy with a shorter maxMs: the payer's looks are capped at four times it, or at payerMaxMs", async () => {
  const spacing = async (polling: { maxMs: number; payerMaxMs?: number }) => {
    const { id, provider, t0, handle } = await kind.start({
      initial: (id) => threeDs(id, 5_000),
      settings: { polling: { webhooks: true, lateAfterMs: 2_000, initialMs: 1_000, factor: 2, ...polling } },
    });
    await kind.reaches(handle, 'awaiting_payer');
    provider.at(id, t0 + 5 * MINUTE, succeeded); // its webhook is lost: only a look finds it
    expect((await kind.result(handle)).final?.phase).toBe('succeeded');
    const looks = provider.calls
      .filter((c) => c.name === 'getState' && c.sessionId === id && c.atMs - t0 < 5 * MINUTE)
      .map((c) => c.atMs - t0);
    return Math.max(...looks.slice(1).map((at, i) => at - looks[i]!));
  };
  const derived = await spacing({ maxMs: 10_000 });
  expect(derived).toBeGreaterThan(10_000 + 1_000);
  expect(derived).toBeLessThanOrEqual(40_000 + 1_000);
  expect(await spacing({ maxMs: 10_000, payerMaxMs: 15_000 })).toBeLessThanOrEqual(15_000 + 1_000);
});
