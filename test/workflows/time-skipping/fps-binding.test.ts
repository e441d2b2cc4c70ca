/**
 * The FPS binding's process on the time-skipping server with a fake provider: the payer confirms in the
 * bank app and the provider gives a recurring token; a success without a token needs attention.
 */
import type { StartSpec } from '../../../common/session-input';
import type { SessionInfo } from '../../../provider/schemas';
import { opened, succeeded } from '../../helpers/fake-provider';
import { MINUTE, useKindWorker } from '../../helpers/kind-worker';

jest.setTimeout(60_000);
const kind = useKindWorker('fps_binding');
const bind: StartSpec = {
  by: 'workflow',
  operation: 'checkout',
  body: { payment_settings: { allow_recurring: true } },
};
const withToken = (s: SessionInfo): SessionInfo => {
  const done = succeeded(s);
  done.payments![0]!.recurring_token_info = { token: 'rt_bound' };
  return done;
};

it('the payer confirms: succeeded with its recurring token', async () => {
  const { id, provider, t0, handle } = await kind.start({ initial: opened, start: bind, amount: 100 });
  await kind.reaches(handle, 'awaiting_payer');
  provider.at(id, t0 + 3 * MINUTE, withToken);

  const state = await kind.result(handle);
  expect(state.final?.phase).toBe('succeeded');
  expect(state.attention).toBeUndefined();
  expect(state.snapshot?.payments?.[0]?.recurring_token_info?.token).toBe('rt_bound');
});

it('a success without a token: succeeded (the provider says so), and needs attention', async () => {
  const { id, provider, t0, handle } = await kind.start({ initial: opened, start: bind, amount: 100 });
  await kind.reaches(handle, 'awaiting_payer');
  provider.at(id, t0 + 3 * MINUTE, succeeded);

  const state = await kind.result(handle);
  expect(state.final?.phase).toBe('succeeded');
  expect(state.attention).toEqual({
    code: 'binding_without_token',
    detail: 'the provider reported success without a recurring token',
    since: expect.any(String),
  });
});
