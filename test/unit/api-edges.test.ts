/**
 * The pure parts of the API's edges (docs/decisions/014-two-listeners.md): the per-session throttle of the
 * return page, the loopback rule of the codec, the listeners' configuration, the signed back_url, and the
 * workflow's own throttle of payer returns.
 */
import { listenConfigFromEnv } from '../../api/listen-config';
import { assertCodecProtected, isLoopback } from '../../api/listeners';
import { ReturnChecks } from '../../api/return-checks';
import { ReturnUrls } from '../../client/return-url';
import { RETURN_TOKEN_TTL_MS, returnToken, verifyReturnToken } from '../../platform/return-token';
import { PayerReturnThrottle } from '../../workflows/payer-return';

const SECRET = 's'.repeat(32);

describe('ReturnChecks', () => {
  it('starts one check per session per interval; later requests share it; a new one after the interval', async () => {
    let now = 1_000;
    const checks = new ReturnChecks<string>(5_000, 100, () => now);
    let started = 0;
    const check = async () => `check ${++started}`;
    const first = checks.latest('ps_1', check);
    expect(first.fresh).toBe(true);
    for (let i = 0; i < 200; i++) {
      now += 20; // 4 s in all
      const again = checks.latest('ps_1', check);
      expect(again.fresh).toBe(false);
      expect(await again.result).toBe('check 1');
    }
    now = 1_000 + 5_000;
    expect(checks.latest('ps_1', check).fresh).toBe(true);
    expect(started).toBe(2);
  });

  it('a reread replaces the result of the interval without starting a check; concurrent rereads share one', async () => {
    const checks = new ReturnChecks<string>(5_000, 100, () => 0);
    checks.latest('ps_1', async () => 'processing');
    let reads = 0;
    const read = () => new Promise<string>((r) => setTimeout(() => r(`read ${++reads}`), 10));
    const both = await Promise.all([checks.reread('ps_1', read), checks.reread('ps_1', read)]);
    expect(both).toEqual(['read 1', 'read 1']);
    const latest = checks.latest('ps_1', async () => 'a new check');
    expect(latest.fresh).toBe(false);
    expect(await latest.result).toBe('read 1');
  });

  it('memory is bounded: past intervals are forgotten, and beyond the limit the oldest go', () => {
    let now = 0;
    const checks = new ReturnChecks<number>(5_000, 50, () => now);
    for (let i = 0; i < 1_000; i++) {
      now += 1;
      checks.latest(`ps_${i}`, async () => i);
    }
    expect(checks.size).toBe(50);
    now += 10_000;
    checks.latest('ps_new', async () => 0);
    expect(checks.size).toBe(1);
  });
});

describe('PayerReturnThrottle (workflow side)', () => {
  it('admits one return per interval', () => {
    const t = new PayerReturnThrottle(5_000);
    const admitted = Array.from({ length: 100 }, (_v, i) => t.admit(1_000 + i * 100)).filter(Boolean);
    expect(admitted).toHaveLength(2); // at 1000 and at 6000
  });
});

describe('codec exposure', () => {
  it.each(['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost', '::ffff:127.0.0.1'])(
    '%s is loopback',
    (h) => expect(isLoopback(h)).toBe(true),
  );
  it.each(['0.0.0.0', '::', '10.0.0.5', 'paysaga-api', '128.0.0.1'])('%s is not', (h) =>
    expect(isLoopback(h)).toBe(false),
  );
  it('an open codec off loopback is refused, naming PAYSAGA_CODEC_TOKENS; with a token or on loopback it is not', () => {
    expect(() => assertCodecProtected({ codec: true, tokens: [], host: '0.0.0.0' })).toThrow(
      new Error(
        'the codec server (/codec, on with PAYSAGA_CODEC_KEYS) would be open on 0.0.0.0, which is not loopback: set PAYSAGA_CODEC_TOKENS (bearer tokens the Temporal UI or CLI send), or keep PAYSAGA_INTERNAL_HOST on 127.0.0.1',
      ),
    );
    expect(() => assertCodecProtected({ codec: true, tokens: ['staff'], host: '0.0.0.0' })).not.toThrow();
    expect(() => assertCodecProtected({ codec: true, tokens: [], host: '127.0.0.1' })).not.toThrow();
    expect(() => assertCodecProtected({ codec: false, tokens: [], host: '0.0.0.0' })).not.toThrow();
  });
});

describe('listenConfigFromEnv', () => {
  it('defaults: public 127.0.0.1:8080, internal 127.0.0.1:8081, /v1 internal, returns off', () => {
    expect(listenConfigFromEnv({})).toEqual({
      public: { host: '127.0.0.1', port: 8080 },
      internal: { host: '127.0.0.1', port: 8081 },
      v1Listener: 'internal',
      returnSecrets: [],
    });
  });
  it('reads every variable; overrides win', () => {
    const c = listenConfigFromEnv(
      {
        PAYSAGA_PUBLIC_HOST: '0.0.0.0',
        PAYSAGA_PUBLIC_PORT: '80',
        PAYSAGA_INTERNAL_PORT: '9000',
        PAYSAGA_V1_LISTENER: 'public',
        PAYSAGA_PUBLIC_URL: 'https://pay.example',
        PAYSAGA_RETURN_SECRETS: `${SECRET}, ${'t'.repeat(20)}`,
        PAYSAGA_RETURN_URL: 'https://shop.example/thanks',
      },
      { internal: { host: '127.0.0.2' } },
    );
    expect(c).toEqual({
      public: { host: '0.0.0.0', port: 80 },
      internal: { host: '127.0.0.2', port: 9000 },
      v1Listener: 'public',
      publicUrl: 'https://pay.example',
      returnSecrets: [SECRET, 't'.repeat(20)],
      returnUrl: 'https://shop.example/thanks',
    });
  });
  it('secrets without a public URL: refused, unless the URL is derived (paysaga dev)', () => {
    expect(() => listenConfigFromEnv({ PAYSAGA_RETURN_SECRETS: SECRET })).toThrow(
      new Error(
        'PAYSAGA_RETURN_SECRETS is set but PAYSAGA_PUBLIC_URL is not: set it to the base URL at which the provider and payers reach the public listener (e.g. https://pay.example.com)',
      ),
    );
    expect(
      listenConfigFromEnv({ PAYSAGA_RETURN_SECRETS: SECRET }, { derivePublicUrl: true }).returnSecrets,
    ).toEqual([SECRET]);
  });
  it('the removed one-listener variables are refused with their replacement', () => {
    expect(() => listenConfigFromEnv({ PAYSAGA_API_PORT: '8080' })).toThrow(
      new Error(
        'PAYSAGA_API_PORT is no longer read: the API listens twice, set PAYSAGA_PUBLIC_PORT (webhooks, payer returns) and PAYSAGA_INTERNAL_PORT (/v1, docs, metrics, codec) instead (api/README.md)',
      ),
    );
    expect(() => listenConfigFromEnv({ PAYSAGA_API_HOST: '0.0.0.0' })).toThrow(
      new Error(
        'PAYSAGA_API_HOST is no longer read: the API listens twice, set PAYSAGA_PUBLIC_HOST and PAYSAGA_INTERNAL_HOST instead (api/README.md)',
      ),
    );
  });
});

describe('ReturnUrls', () => {
  it("a session's back_url: the public base, the session id, its token (base with a path prefix kept)", () => {
    const urls = new ReturnUrls('https://pay.example/paysaga', [SECRET, 'o'.repeat(32)]);
    const url = new URL(urls.forSession('ps_42'));
    expect(`${url.origin}${url.pathname}`).toBe('https://pay.example/paysaga/return/ps_42');
    expect(verifyReturnToken([SECRET], 'ps_42', url.searchParams.get('t'))).toBe(true);
    expect(verifyReturnToken([SECRET], 'ps_43', url.searchParams.get('t'))).toBe(false);
  });
  it('a return token carries its expiry, signed: past it, or with the expiry changed, it is refused', () => {
    const now = Date.now();
    const token = returnToken(SECRET, 'ps_42', now + 60_000);
    expect(verifyReturnToken([SECRET], 'ps_42', token, now)).toBe(true);
    expect(verifyReturnToken([SECRET], 'ps_42', token, now + 60_001)).toBe(false);
    const [, mac] = token.split('.');
    const extended = `${(now + RETURN_TOKEN_TTL_MS * 12).toString(36)}.${mac}`;
    expect(verifyReturnToken([SECRET], 'ps_42', extended, now)).toBe(false);
    // A link of the old shape (no expiry) shows nothing.
    expect(verifyReturnToken([SECRET], 'ps_42', mac, now)).toBe(false);
    // The default lasts longer than any payer deadline (30 days at most).
    const fresh = returnToken(SECRET, 'ps_42');
    expect(verifyReturnToken([SECRET], 'ps_42', fresh, now + 30 * 24 * 3_600_000)).toBe(true);
  });
  it('refuses a base with a query, a non-http URL, no secret', () => {
    expect(() => new ReturnUrls('https://pay.example/?a=1', [SECRET])).toThrow(
      new Error(
        'PAYSAGA_PUBLIC_URL must be a base URL without query or fragment, got https://pay.example/?a=1',
      ),
    );
    expect(() => new ReturnUrls('ftp://pay.example', [SECRET])).toThrow(
      new Error('PAYSAGA_PUBLIC_URL must be an http(s) URL, got ftp://pay.example'),
    );
    expect(() => new ReturnUrls('https://pay.example', [])).toThrow(
      new Error('PAYSAGA_RETURN_SECRETS is empty: give at least one secret'),
    );
  });
});
