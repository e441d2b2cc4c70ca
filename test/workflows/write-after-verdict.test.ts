/**
 * A session's record write waits for the verdict on a provider event being verified (patch
 * `write-after-verdict`, workflows/session-recorder.ts): a change made while the worker checks a
 * webhook goes to the store with the verdict's own change, in one write, instead of a write that the
 * verdict supersedes at once. On the time-skipping server with a fake provider whose verification the
 * test holds; the real-stack tests and `bench sessions` run the same code against the sandbox.
 */
import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { payerReturnedSignal, providerEventSignal } from '../../common/messages';
import type { ProviderEventDelivery, SessionInput } from '../../common/session-input';
import { DEFAULT_SETTINGS, mergeSettings } from '../../common/settings';
import type { checkoutWorkflow } from '../../workflows/checkout';
import { FakeProvider, succeeded, threeDs } from '../helpers/fake-provider';
import { useFakeProviderWorker } from '../helpers/fake-provider-worker';
import { until } from '../helpers/until';

jest.setTimeout(60_000);

const fx = useFakeProviderWorker('write-after-verdict');

/** Within `ms` of real time: the writes the fake store has seen stay as they are. */
async function writesHold(provider: FakeProvider, ms: number): Promise<boolean> {
  const before = provider.writes.length;
  await new Promise((r) => setTimeout(r, ms));
  return provider.writes.length === before;
}

describe('a record write waits for the verdict in flight', () => {
  it('a change made while a webhook is verified is written with the verdict, once', async () => {
    const provider = new FakeProvider();
    const id = `ps_${randomUUID().slice(0, 8)}`;
    const t0 = await fx.env.currentTimeMs();
    provider.open(threeDs(id, 3_000), t0);
    fx.providers.set(id, provider);
    const input: SessionInput = {
      sessionId: id,
      kind: 'card_checkout',
      reference: `verdict-${id}`,
      request: { money: { amount: 3_000, currency: 'rub' } },
      start: { by: 'provider' },
      settings: mergeSettings(DEFAULT_SETTINGS, { followMs: 1_000 }),
      initialSnapshot: provider.stateAt(id, t0),
    };
    const handle: WorkflowHandle<typeof checkoutWorkflow> = await fx.env.client.workflow.start<
      typeof checkoutWorkflow
    >('checkoutWorkflow', { workflowId: id, taskQueue: fx.taskQueue, args: [input] });
    let releaseVerdict = () => {};
    try {
      const writes = async () => ({ count: provider.writes.length, underWay: provider.writesUnderWay });
      await until('the first write', writes, (w) => w.count > 0 && w.underWay === 0, 20_000, 20);
      expect(await writesHold(provider, 300)).toBe(true);

      // A slow write keeps the workflow task open, so the next two signals reach the session together.
      provider.recordDelayMs = () => 1_500;
      await handle.signal(payerReturnedSignal);
      await until('the slow write', writes, (w) => w.underWay === 1, 20_000, 20);
      provider.recordDelayMs = () => 0;

      const verdict = provider.holdVerdict();
      releaseVerdict = verdict.release;
      const paid = {
        ...succeeded(provider.stateAt(id, t0)),
        updated_at: new Date(t0 + 60_000).toISOString(),
      };
      provider.at(id, t0 + 1, succeeded);
      const receivedAt = new Date().toISOString();
      // An unsigned claim first: refused, and the refusal in the audit is a change to write.
      const unsigned: ProviderEventDelivery = {
        receivedAt,
        via: 'webhook',
        event: { type: 'checkout_results', session_info: { id } },
      } as ProviderEventDelivery;
      const signed: ProviderEventDelivery = {
        receivedAt,
        via: 'webhook',
        signed: { body: JSON.stringify({ type: 'checkout_results', session_info: paid }), signature: 'fake' },
        event: { type: 'checkout_results', session_info: { id, updated_at: paid.updated_at } },
      } as ProviderEventDelivery;
      await handle.signal(providerEventSignal, unsigned);
      await handle.signal(providerEventSignal, signed);
      await verdict.reached;
      await until('the slow write done', writes, (w) => w.underWay === 0, 20_000, 20);
      const beforeVerdict = provider.writes.length;
      // The refusal's change is due, and the signed event is being verified: nothing is written.
      expect(await writesHold(provider, 700)).toBe(true);

      verdict.release();
      await until('the write after the verdict', writes, (w) => w.count > beforeVerdict, 20_000, 20);
      // One write carries both: the refusal and the result the verdict applied.
      expect(provider.writes[beforeVerdict]).toMatchObject({ phase: 'succeeded' });
      const state = await handle.result();
      expect(state.final?.phase).toBe('succeeded');
      const refused = state.providerEvents.filter((e) => e.outcome === 'refused');
      expect(refused).toHaveLength(1);
    } finally {
      // A failed expectation must not leave the worker waiting on the held verdict.
      releaseVerdict();
      await handle.terminate().catch(() => undefined);
      fx.providers.delete(id);
    }
  });
});
