/** PAYSAGA_TRUST_PROXY as read at start (api/trust-proxy.ts): a list of proxies, or nothing. */
import { trustProxyFromEnv } from '../../api/trust-proxy';

describe('PAYSAGA_TRUST_PROXY', () => {
  it('is off unless set', () => {
    expect(trustProxyFromEnv({})).toEqual([]);
    expect(trustProxyFromEnv({ PAYSAGA_TRUST_PROXY: ' ' })).toEqual([]);
  });

  it('lists addresses and CIDR ranges, IPv4 and IPv6', () => {
    expect(trustProxyFromEnv({ PAYSAGA_TRUST_PROXY: '10.0.0.5, 10.1.0.0/16,fd00::/8 ,::1' })).toEqual([
      '10.0.0.5',
      '10.1.0.0/16',
      'fd00::/8',
      '::1',
    ]);
  });

  it.each(['true', '*', 'proxy.internal', '10.0.0.0/33', '10.0.0.0/', '10.0.0.0/8/1', 'fd00::/129'])(
    'refuses %s, naming the variable',
    (value) => {
      expect(() => trustProxyFromEnv({ PAYSAGA_TRUST_PROXY: value })).toThrow(
        new Error(
          `PAYSAGA_TRUST_PROXY: ${value} is not an address or a CIDR range (list the proxies in front ` +
            'of the API, e.g. 10.0.0.5,10.1.0.0/16)',
        ),
      );
    },
  );

  it('refuses a range that holds every address (every client could pick its own)', () => {
    for (const value of ['0.0.0.0/0', '::/0'])
      expect(() => trustProxyFromEnv({ PAYSAGA_TRUST_PROXY: value })).toThrow(
        new Error(
          `PAYSAGA_TRUST_PROXY: ${value} would trust X-Forwarded-For from every client; list the proxies`,
        ),
      );
  });
});
