/**
 * The identity check's process on the time-skipping server with a fake provider: the provider call that
 * made the session started the check; the session follows it to registered (succeeded) or not
 * registered (canceled, with the spec's reason).
 */
import type { SessionInfo } from '../../../provider/schemas';
import { failed, payoutAwaitingApproval, succeeded } from '../../helpers/fake-provider';
import { MINUTE, useKindWorker } from '../../helpers/kind-worker';

jest.setTimeout(60_000);
const kind = useKindWorker('identity_check');
/** The check under way at the provider (its operation waits on the bank, not on the partner). */
const checking = (id: string): SessionInfo => payoutAwaitingApproval(id, 100);

it('registered in FPS: succeeded', async () => {
  const { id, provider, t0, handle } = await kind.start({ initial: checking, amount: 100 });
  await kind.reaches(handle, 'processing');
  provider.at(id, t0 + MINUTE, succeeded);

  const state = await kind.result(handle);
  expect(state.final?.phase).toBe('succeeded');
  expect(provider.count('approve')).toBe(0);
});

it('not registered: canceled, with the reason the spec gives', async () => {
  const { id, provider, t0, handle } = await kind.start({ initial: checking, amount: 100 });
  provider.at(id, t0 + MINUTE, (s) => failed(s, 'recipient_not_registered'));

  const state = await kind.result(handle);
  expect(state.final).toMatchObject({
    phase: 'canceled',
    reason: { code: 'recipient_not_registered', detail: 'the phone number is not registered in FPS' },
  });
});
