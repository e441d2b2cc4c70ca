/**
 * The outbound guard (platform/outbound-guard.ts) on IPv6 addresses that reach an IPv4 one (IPv4-mapped,
 * NAT64, 6to4), deprecated and special-purpose IPv6 ranges, and the 6to4 relay range. Names are answered
 * by a stub resolver and only `check` runs: nothing here opens a socket.
 */
import { OutboundGuard } from '../../platform/outbound-guard';
import { refusal, stubResolver } from '../helpers/outbound';

const strict = (zone: Record<string, string[]> = {}) =>
  new OutboundGuard({ allowHttp: false, allow: [], resolve: stubResolver(zone) });

describe('the outbound guard on IPv6 forms of IPv4 addresses and special ranges', () => {
  it.each([
    // 6to4 (2002::/16) and its relay range: deprecated, and the address behind it may be private.
    '2002:a00:1::1', // 10.0.0.1
    '2002:a9fe:a9fe::', // 169.254.169.254
    '2002:cb00:7209::1', // 203.0.114.9, public: 6to4 itself is refused
    '192.88.99.1',
    // NAT64, well-known and local-use prefixes.
    '64:ff9b::a9fe:a9fe', // 169.254.169.254
    '64:ff9b::7f00:1', // 127.0.0.1
    '64:ff9b::cb00:7209', // public behind NAT64: refused unless the prefix is allowed
    '64:ff9b:1::a00:1',
    '64:ff9b:1:ffff::cb00:7209',
    // IPv4-compatible (deprecated), IPv4-mapped, IPv4-translated.
    '::a9fe:a9fe',
    '::127.0.0.1',
    '::ffff:169.254.169.254',
    '::ffff:a00:1',
    '::ffff:0:a00:1',
    // Site-local (deprecated), Teredo, benchmarking, ORCHID, documentation, segment routing.
    'fec0::1',
    'feff::1',
    '2001::1',
    '2001:2::1',
    '2001:10::1',
    '3fff::1',
    '5f00::1',
  ])('%s is refused, as a literal and as what a name resolves to', async (address) => {
    const literal = address.includes(':') ? `[${address}]` : address;
    expect(await refusal(strict(), `https://${literal}/hook`)).toContain('a public address');
    expect(await refusal(strict({ 'h.example': [address] }), 'https://h.example/hook')).toContain(
      'a public address',
    );
  });

  it('public IPv4 and IPv6 addresses, and an IPv4-mapped public address, are accepted', async () => {
    for (const address of ['203.0.114.9', '::ffff:203.0.114.9', '2a00:1450:4001:80b::200e', '2003::1'])
      expect(await refusal(strict({ 'h.example': [address] }), 'https://h.example/hook')).toBeUndefined();
  });

  it('an allowed NAT64 or 6to4 prefix still reaches only public IPv4 addresses', async () => {
    const zone = {
      'public.example': ['64:ff9b::cb00:7209'], // 203.0.114.9
      'meta.example': ['64:ff9b::a9fe:a9fe'], // 169.254.169.254
      'ten.example': ['2002:a00:1::1'], // 10.0.0.1
      'relay.example': ['2002:cb00:7209::1'], // 203.0.114.9
    };
    const nat64 = new OutboundGuard({
      allowHttp: false,
      allow: ['64:ff9b::/96', '2002::/16'],
      resolve: stubResolver(zone),
    });
    expect(await refusal(nat64, 'https://public.example/')).toBeUndefined();
    expect(await refusal(nat64, 'https://relay.example/')).toBeUndefined();
    for (const url of ['https://meta.example/', 'https://ten.example/', 'https://[64:ff9b::10.1.2.3]/'])
      expect(await refusal(nat64, url)).toContain('carries a loopback, link-local, private or reserved IPv4');
    // The IPv4 range allowed, its forms are allowed too.
    const ten = new OutboundGuard({
      allowHttp: false,
      allow: ['64:ff9b::/96', '2002::/16', '10.0.0.0/8'],
      resolve: stubResolver(zone),
    });
    expect(await refusal(ten, 'https://ten.example/')).toBeUndefined();
    expect(await refusal(ten, 'https://[::ffff:10.9.8.7]/')).toBeUndefined();
    expect(await refusal(ten, 'https://meta.example/')).toContain('IPv4');
  });

  it('the refusal of a name does not say which address it resolved to', async () => {
    const rule = await refusal(strict({ 'h.example': ['64:ff9b::a9fe:a9fe'] }), 'https://h.example/');
    expect(rule).toContain('h.example');
    expect(rule).not.toMatch(/169\.254|a9fe|64:ff9b/);
  });
});
