/**
 * PAYSAGA_TRUST_PROXY over HTTP (api/trust-proxy.ts): the refused-token limit and the public listener's
 * request limit count each client under its own address. Without the setting X-Forwarded-For is ignored
 * whoever sends it; with it, only a request whose socket comes from a listed proxy is counted under the
 * address the header reports, and under the last one the proxy added (what a client prepends is not
 * believed). The "proxy" is this process connecting from 127.0.0.2, the client from 127.0.0.1.
 */
import { Agent, request } from 'undici';
import { buildApi, type PaysagaApi } from '../../api/app';
import { apiDepsFor, listenLocally, useApiStack } from './api-stack';

describe('the client address behind a trusted proxy', () => {
  const s = useApiStack({ webhooks: false });
  const proxy = new Agent({ localAddress: '127.0.0.2' });
  const direct = new Agent({ localAddress: '127.0.0.1' });
  afterAll(async () => {
    await proxy.close();
    await direct.close();
  });

  /** An API refusing 3 wrong tokens a minute per address, and 3 public requests a minute per address. */
  async function api(trustProxy?: string[]): Promise<{ api: PaysagaApi; v1: string; pub: string }> {
    const built = buildApi({
      ...apiDepsFor(s.stack),
      apiTokens: [s.token],
      authFailures: { maxFailures: 3, windowMs: 60_000 },
      publicRateLimit: { max: 3, windowMs: 60_000 },
      ...(trustProxy ? { trustProxy } : {}),
    });
    const urls = await listenLocally(built);
    return { api: built, v1: urls.v1Url, pub: urls.publicUrl };
  }

  /** A wrong token sent to /v1 through `via` with X-Forwarded-For `forwarded`: the status. */
  async function guess(base: string, via: Agent, forwarded?: string): Promise<number> {
    const res = await request(`${base}/v1/sessions`, {
      dispatcher: via,
      headers: {
        authorization: 'Bearer wrong-token-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx',
        ...(forwarded ? { 'x-forwarded-for': forwarded } : {}),
      },
    });
    await res.body.dump();
    return res.statusCode;
  }

  it('without PAYSAGA_TRUST_PROXY, X-Forwarded-For is ignored: one address, one count', async () => {
    const { api: built, v1 } = await api();
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push(await guess(v1, proxy, `198.51.100.${i + 1}`));
      // A fresh forwarded address each try changes nothing: the socket's address is cut off.
      expect(statuses).toEqual([401, 401, 401, 429, 429]);
      // Another socket address is another count (the limit is per address, not global).
      expect(await guess(v1, direct)).toBe(401);
    } finally {
      await built.close();
    }
  });

  it('with it, a trusted proxy’s clients are counted apart, each under the address the proxy added', async () => {
    const { api: built, v1, pub } = await api(['127.0.0.2']);
    try {
      // Client A behind the proxy guesses: cut off after 3, whatever it prepends to the header.
      const a: number[] = [];
      for (let i = 0; i < 5; i++) a.push(await guess(v1, proxy, `10.9.9.${i}, 203.0.113.7`));
      expect(a).toEqual([401, 401, 401, 429, 429]);
      // Client B behind the same proxy is not locked out by A.
      expect(await guess(v1, proxy, '203.0.113.8')).toBe(401);
      expect(
        (
          await request(`${v1}/v1/sessions`, {
            dispatcher: proxy,
            headers: {
              authorization: `Bearer ${s.token}`,
              'x-forwarded-for': '203.0.113.9',
            },
          })
        ).statusCode,
      ).toBe(200);
      // A peer that is not the proxy: its header is ignored, it is counted under its own address.
      const untrusted: number[] = [];
      for (let i = 0; i < 5; i++) untrusted.push(await guess(v1, direct, `203.0.113.${50 + i}`));
      expect(untrusted).toEqual([401, 401, 401, 429, 429]);
      // The public listener's request limit counts the same client addresses.
      const returns = async (forwarded: string) => {
        const res = await request(`${pub}/return/ps_1?t=nope`, {
          dispatcher: proxy,
          headers: { 'x-forwarded-for': forwarded },
        });
        await res.body.dump();
        return res.statusCode;
      };
      const c: number[] = [];
      for (let i = 0; i < 4; i++) c.push(await returns('203.0.113.20'));
      expect(c).toEqual([404, 404, 404, 429]);
      expect(await returns('203.0.113.21')).toBe(404);
    } finally {
      await built.close();
    }
  });
});
