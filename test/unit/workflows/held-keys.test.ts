/**
 * The keys a session holds (common/webhook-proof.ts): an event signed with one it holds is read as the
 * worker's check reads it (activities/proof-activities.ts), to the byte; anything else is left to the
 * worker, and so is every event once the key has been held for KEY_HELD_MS.
 */
import { sign } from 'node:crypto';
import { createProofActivities } from '../../../activities/proof-activities';
import { HeldKeys, KEY_HELD_MS } from '../../../common/webhook-proof';
import { createWebhookVerifier } from '../../../provider';
import { TEST_CARD } from '../../../sandbox/test-cards';
import { generateTestKeyPair } from '../../helpers/keys';

const provider = generateTestKeyPair();
const worker = createProofActivities(createWebhookVerifier([provider.publicPem]));
const signed = (body: string, key = provider.privateKey) => ({
  body,
  signature: sign('sha256', Buffer.from(body, 'utf8'), key).toString('base64'),
});
const event = {
  type: 'checkout_results',
  extra: { kept: true },
  session_info: {
    id: 'ps_1',
    transaction_status: 'completed',
    updated_at: '2026-11-29T06:00:00Z',
    payments: [
      {
        id: 'pm_1',
        transaction_status: 'successful',
        // A card number never leaves the check, whichever makes it.
        payment_info: {
          type: 'card',
          card: { card_number: TEST_CARD.visa, card_bin: TEST_CARD.visa.slice(0, 6) },
        },
        sum_info: { sum: 1000, currency_code: 'RUB' },
        user_action: { type: 'redirect', redirect: { url: 'https://acs.example/3ds', method: 'post' } },
      },
    ],
  },
};

describe('the keys a session holds', () => {
  afterEach(() => jest.useRealTimers());

  it('reads an event signed with a held key exactly as the worker does', async () => {
    const keys = new HeldKeys();
    const delivery = signed(JSON.stringify(event));
    expect(keys.check(delivery)).toBeUndefined();
    const proof = await worker.verifyProviderEvent(delivery);
    if (!proof.ok || !proof.key) throw new Error('the worker refused a genuine event');
    keys.hold(proof.key);
    const { key: _key, ...byWorker } = proof;
    const here = keys.check(delivery);
    // As the worker's verdict reaches the session: through JSON.
    expect(here).toEqual(JSON.parse(JSON.stringify(byWorker)));
    expect(JSON.stringify(here)).toBe(JSON.stringify(byWorker));
    expect(JSON.stringify(here)).not.toContain(TEST_CARD.visa);
    expect(here).toMatchObject({
      ok: true,
      event: { session_info: { payments: [{ sum_info: { currency_code: 'rub' } }] } },
    });
  });

  it('refuses a signed body that is no event as the worker does; leaves every other signature to it', async () => {
    const keys = new HeldKeys();
    const first = await worker.verifyProviderEvent(signed(JSON.stringify(event)));
    keys.hold((first as { key: Parameters<HeldKeys['hold']>[0] }).key);
    for (const body of ['not json', JSON.stringify({ type: 'x', session_info: { id: 5 } })]) {
      const d = signed(body);
      expect(keys.check(d)).toEqual(await worker.verifyProviderEvent(d));
      expect(keys.check(d)).toMatchObject({ ok: false });
    }
    const other = generateTestKeyPair().privateKey;
    expect(keys.check(signed(JSON.stringify(event), other))).toBeUndefined();
    expect(keys.check({ body: JSON.stringify(event), signature: 'AAAA' })).toBeUndefined();
    keys.hold({ n: 'not hex', e: 65537 });
    expect(keys.check(signed(JSON.stringify(event), other))).toBeUndefined();
  });

  it('stops believing a key KEY_HELD_MS after the worker last verified with it', async () => {
    jest.useFakeTimers({ now: Date.parse('2026-11-29T06:00:00Z') });
    const keys = new HeldKeys();
    const delivery = signed(JSON.stringify(event));
    const proof = await worker.verifyProviderEvent(delivery);
    keys.hold((proof as { key: Parameters<HeldKeys['hold']>[0] }).key);
    jest.setSystemTime(Date.now() + KEY_HELD_MS - 1);
    expect(keys.check(delivery)).toMatchObject({ ok: true });
    jest.setSystemTime(Date.now() + 1);
    expect(keys.check(delivery)).toBeUndefined();
  });
});
