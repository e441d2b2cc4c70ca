/**
 * The FPS payment's process on the time-skipping server with a fake provider: the workflow starts the
 * payment, the payer scans the QR; an expired QR is replaced while renewals last, then it is the end.
 */
import type { StartSpec } from '../../../common/session-input';
import { failed, opened, succeeded } from '../../helpers/fake-provider';
import { announced, MINUTE, useKindWorker } from '../../helpers/kind-worker';

jest.setTimeout(60_000);
const kind = useKindWorker('fps_payment');
const qrStart: StartSpec = {
  by: 'workflow',
  operation: 'checkout',
  body: { sum_info: { sum: 5_000, currency_code: 'rub' } },
};

it('the workflow starts the payment, the payer pays by QR: succeeded', async () => {
  const { id, provider, t0, handle } = await kind.start({ initial: opened, start: qrStart });
  await kind.reaches(handle, 'awaiting_payer');
  expect((await handle.query('session')) as { userAction?: { type: string } }).toMatchObject({
    userAction: { type: 'qr' },
  });
  provider.at(id, t0 + 2 * MINUTE, succeeded);

  const state = await kind.result(handle);
  expect(state.final?.phase).toBe('succeeded');
  expect(provider.count('startCheckout')).toBe(1);
  expect(announced(provider, id)).toEqual(['session.created', 'session.awaiting_payer', 'session.succeeded']);
});

it('an expired QR is replaced once (qrRenewals: 1); the second expiry ends it, failed qr_expired', async () => {
  const { id, provider, handle } = await kind.start({
    initial: opened,
    start: qrStart,
    input: { qrRenewals: 1 },
    // Only looks tell (no webhooks here): one every 4 minutes while the payer acts (4 × maxMs).
    settings: { polling: { maxMs: MINUTE } },
  });
  await kind.reaches(handle, 'awaiting_payer');
  provider.at(id, (await kind.env.currentTimeMs()) + 5 * MINUTE, (s) => failed(s, 'qr_expired'));
  await kind.env.sleep(10 * MINUTE);
  await kind.reaches(handle, 'awaiting_payer'); // a new payment, a new QR
  expect(provider.count('startCheckout')).toBe(2);
  provider.at(id, (await kind.env.currentTimeMs()) + 5 * MINUTE, (s) => failed(s, 'qr_expired'));

  const state = await kind.result(handle);
  expect(state.final).toMatchObject({
    phase: 'failed',
    reason: { code: 'provider_error', providerCode: 'qr_expired' },
  });
  expect(state.renewals).toBe(1);
  expect(state.snapshot?.payments).toHaveLength(2);
  expect(provider.count('startCheckout')).toBe(2);
});
