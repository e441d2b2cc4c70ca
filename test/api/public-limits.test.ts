/**
 * The public listener's per-address limit: past the limit, 429 in the API's
 * envelope with Retry-After, on every public route, except for webhooks the provider signed; the internal
 * listener is not limited by it.
 */
import { sign } from 'node:crypto';
import { request } from 'undici';
import { buildApi } from '../../api/app';
import { apiDepsFor, listenLocally, useApiStack } from './api-stack';

/* eslint-disable @typescript-eslint/no-explicit-any -- answers are inspected field by field */

describe('the public listener limits requests per address', () => {
  const stack = useApiStack({ webhooks: false });
  const serviceSign = (raw: string) =>
    sign('sha256', Buffer.from(raw), stack.stack.sandbox.keys.service.privateKey).toString('base64');

  it('answers 429 rate_limited with Retry-After past the limit; /v1 is not counted', async () => {
    const api = buildApi({
      ...apiDepsFor(stack.stack),
      apiTokens: ['limit-test-token'],
      publicRateLimit: { max: 3, windowMs: 60_000 },
    });
    try {
      const { publicUrl, v1Url } = await listenLocally(api);
      const statuses: number[] = [];
      let last: { body: any; retryAfter: unknown } | undefined;
      for (let i = 0; i < 5; i++) {
        const res = await request(`${publicUrl}/return/ps_1?t=nope`);
        statuses.push(res.statusCode);
        last = { body: await res.body.json().catch(() => undefined), retryAfter: res.headers['retry-after'] };
      }
      expect(statuses).toEqual([404, 404, 404, 429, 429]);
      expect(last!.body.error).toMatchObject({ code: 'rate_limited', retryable: true });
      expect(Number(last!.retryAfter)).toBeGreaterThan(0);
      // Webhooks the provider did not sign are counted on their route: past the limit, 429 unverified.
      const unsigned: number[] = [];
      for (let i = 0; i < 5; i++) {
        const res = await request(`${publicUrl}/webhooks/provider`, { method: 'POST', body: '{}' });
        unsigned.push(res.statusCode);
        await res.body.dump();
      }
      expect(unsigned).toEqual([401, 401, 401, 429, 429]);
      // The provider's signed webhooks from the same address are never refused for their rate (a busy
      // partner's provider sends them all from a few addresses): here, each answers that its session
      // has no workflow yet (503), the provider's cue to deliver again, not 429.
      const signed: number[] = [];
      for (let i = 0; i < 6; i++) {
        const raw = JSON.stringify({
          type: 'checkout_results',
          session_info: { id: `ps_90000${i}`, transaction_status: 'completed' },
        });
        const res = await request(`${publicUrl}/webhooks/provider`, {
          method: 'POST',
          body: raw,
          headers: { 'x-signature': serviceSign(raw), 'content-type': 'application/json' },
        });
        signed.push(res.statusCode);
        await res.body.dump();
      }
      expect(signed).toEqual([503, 503, 503, 503, 503, 503]);
      // The internal listener is another door.
      const v1 = await request(`${v1Url}/v1/sessions`, {
        headers: { authorization: 'Bearer limit-test-token' },
      });
      expect(v1.statusCode).toBe(200);
      await v1.body.dump();
    } finally {
      await api.close();
    }
  });
});
