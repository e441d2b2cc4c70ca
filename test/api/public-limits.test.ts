/**
 * The public listener's per-address limit (issue 15, server limits): past the limit, 429 in the API's
 * envelope with Retry-After, on every public route; the internal listener is not limited by it.
 */
import { request } from 'undici';
import { buildApi } from '../../api/app';
import { apiDepsFor, listenLocally, useApiStack } from './api-stack';

/* eslint-disable @typescript-eslint/no-explicit-any -- answers are inspected field by field */

describe('the public listener limits requests per address', () => {
  const stack = useApiStack({ webhooks: false });

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
      // Webhooks share the address's budget on the public listener.
      const webhook = await request(`${publicUrl}/webhooks/provider`, { method: 'POST', body: '{}' });
      expect(webhook.statusCode).toBe(429);
      await webhook.body.dump();
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
