/** PAYSAGA_EVENT_* of the worker (workers/event-config.ts) and the retry schedule (common/event-delivery.ts). */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DEFAULT_EVENT_DELIVERY, retryPauseMs } from '../../../common/event-delivery';
import { eventSettingsFromEnv, parseConfiguredEndpoints } from '../../../workers/event-config';

const SECRET = 'whsec_0123456789abcdef0123';

describe('PAYSAGA_EVENT_ENDPOINTS', () => {
  test('a JSON array: ids, events, several secrets during a rotation', () => {
    const parsed = parseConfiguredEndpoints(
      JSON.stringify([
        { url: 'https://shop.example/paysaga', secret: SECRET, id: 'shop' },
        {
          url: 'http://10.0.0.5:8000/hook',
          secret: [SECRET, `${SECRET}-old`],
          events: ['session.succeeded'],
        },
      ]),
    );
    expect(parsed[0]).toEqual({
      id: 'we_cfg_shop',
      url: 'https://shop.example/paysaga',
      events: null,
      secrets: [SECRET],
    });
    expect(parsed[1]!.id).toMatch(/^we_cfg_[0-9a-f]{12}$/);
    expect(parsed[1]!.events).toEqual(['session.succeeded']);
    expect(parsed[1]!.secrets).toEqual([SECRET, `${SECRET}-old`]);
    // The same url gives the same id on every worker and every start.
    expect(
      parseConfiguredEndpoints(JSON.stringify([{ url: 'http://10.0.0.5:8000/hook', secret: SECRET }]))[0]!.id,
    ).toBe(parsed[1]!.id);
  });

  test('@file reads the array from a file', () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'paysaga-events-')), 'endpoints.json');
    fs.writeFileSync(file, JSON.stringify([{ url: 'https://a.example/x', secret: SECRET }]));
    expect(parseConfiguredEndpoints(`@${file}`)).toHaveLength(1);
    expect(() => parseConfiguredEndpoints(`@${file}.missing`)).toThrow(
      new Error(
        `PAYSAGA_EVENT_ENDPOINTS: cannot read ${file}.missing: ENOENT: no such file or directory, open '${file}.missing'`,
      ),
    );
  });

  test.each([
    [
      'not JSON',
      'https://a.example|secret',
      new Error(
        'PAYSAGA_EVENT_ENDPOINTS must be a JSON array of {"url", "secret", "events"?, "description"?, "id"?} or @<file>',
      ),
    ],
    [
      'not an array',
      '{"url":"https://a.example"}',
      new Error('PAYSAGA_EVENT_ENDPOINTS must be a JSON array'),
    ],
    [
      'a bad url',
      '[{"url":"ftp://a.example","secret":"whsec_0123456789abcdef0123"}]',
      new Error('PAYSAGA_EVENT_ENDPOINTS[0].url: an http:// or https:// URL'),
    ],
    [
      'no secret',
      '[{"url":"https://a.example"}]',
      new Error(
        'PAYSAGA_EVENT_ENDPOINTS[0].secret: a secret of at least 16 characters, or a list of them (the first is current)',
      ),
    ],
    [
      'a short secret',
      '[{"url":"https://a.example","secret":"short"}]',
      new Error('PAYSAGA_EVENT_ENDPOINTS[0].secret: Too small: expected string to have >=16 characters'),
    ],
    [
      'an unknown event type',
      '[{"url":"https://a.example","secret":"whsec_0123456789abcdef0123","events":["session.done"]}]',
      new Error('PAYSAGA_EVENT_ENDPOINTS[0].events.0: an event type'),
    ],
    [
      'the same id twice',
      '[{"url":"https://a.example","secret":"whsec_0123456789abcdef0123"},{"url":"https://a.example","secret":"whsec_0123456789abcdef0123"}]',
      new Error(
        'PAYSAGA_EVENT_ENDPOINTS: two entries have the id we_cfg_38612c965a9c (give each an "id", or use different urls)',
      ),
    ],
  ])('refused, naming the entry and field: %s', (_name, value, message) => {
    expect(() => parseConfiguredEndpoints(value)).toThrow(message);
  });

  test('an error never quotes a secret', () => {
    const secret = 'whsec_secretthatmustnotleak';
    try {
      parseConfiguredEndpoints(JSON.stringify([{ url: 'nope', secret }]));
      throw new Error('parsed');
    } catch (err) {
      expect((err as Error).message).not.toContain(secret);
    }
  });
});

describe('eventSettingsFromEnv', () => {
  test('defaults: 3 days of retries, a look at the store every 500 ms, configured endpoints untouched', () => {
    const s = eventSettingsFromEnv({});
    expect(s.policy).toEqual(DEFAULT_EVENT_DELIVERY);
    expect(s.policy.retryForMs).toBeGreaterThanOrEqual(3 * 24 * 3_600_000);
    expect(s.configured).toBeUndefined();
    expect(s.deliveryConcurrency).toBe(50);
    expect(s.pollMs).toBe(500);
  });

  test('every knob; an empty PAYSAGA_EVENT_ENDPOINTS removes the configured ones', () => {
    const s = eventSettingsFromEnv({
      PAYSAGA_EVENT_RETRY_FOR_MS: '5000',
      PAYSAGA_EVENT_RETRY_INITIAL_MS: '100',
      PAYSAGA_EVENT_RETRY_MAX_MS: '400',
      PAYSAGA_EVENT_TIMEOUT_MS: '2000',
      PAYSAGA_EVENT_DELIVERY_CONCURRENCY: '7',
      PAYSAGA_EVENT_POLL_MS: '250',
      PAYSAGA_EVENT_ENDPOINTS: '',
    });
    expect(s.policy).toMatchObject({
      retryForMs: 5000,
      initialRetryMs: 100,
      maxRetryMs: 400,
      timeoutMs: 2000,
    });
    expect(s.configured).toEqual([]);
    expect(s.deliveryConcurrency).toBe(7);
    expect(s.pollMs).toBe(250);
  });

  test('a bad value names its variable', () => {
    expect(() => eventSettingsFromEnv({ PAYSAGA_EVENT_RETRY_FOR_MS: 'three days' })).toThrow(
      new Error('PAYSAGA_EVENT_RETRY_FOR_MS must be a positive whole number, got three days'),
    );
    expect(() =>
      eventSettingsFromEnv({ PAYSAGA_EVENT_RETRY_INITIAL_MS: '1000', PAYSAGA_EVENT_RETRY_MAX_MS: '10' }),
    ).toThrow(new Error('PAYSAGA_EVENT_RETRY_MAX_MS must not be below PAYSAGA_EVENT_RETRY_INITIAL_MS'));
  });
});

describe('retry pauses', () => {
  test('grow by the factor up to the maximum; the default schedule retries for three days', () => {
    const p = DEFAULT_EVENT_DELIVERY;
    expect([1, 2, 3, 4].map((n) => retryPauseMs(p, n))).toEqual([10_000, 20_000, 40_000, 80_000]);
    expect(retryPauseMs(p, 50)).toBe(p.maxRetryMs);
    let elapsed = 0;
    let attempts = 0;
    while (elapsed < p.retryForMs) elapsed += retryPauseMs(p, ++attempts);
    // Hourly at the end: about 80 attempts over three days.
    expect(attempts).toBeGreaterThan(70);
    expect(attempts).toBeLessThan(90);
  });
});
