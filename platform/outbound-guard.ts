/**
 * The outbound edge: where paysaga may send a partner's events. An event endpoint is a URL
 * anyone with an admin token chooses, and the worker POSTs to it from inside the deployment; unguarded,
 * it reaches the cloud's metadata service, the database, Temporal, the API's own internal port, and the
 * delivery log turns it into a port scanner.
 *
 * The rule: `https` (plain `http` only where configuration allows it: `paysaga dev`, tests), and every
 * address the host name resolves to is public: not loopback, link-local, private, shared (CGNAT),
 * multicast, reserved, deprecated or documentation space, nor a host the deployment itself uses
 * (Temporal, the store, its own public URL). An IPv6 address that carries an IPv4 address (IPv4-mapped,
 * NAT64, 6to4) is judged by that IPv4 address as well. An allow-list in configuration exempts named hosts or ranges. Checked at
 * registration and again at each delivery, on the very addresses the socket would connect to (a name
 * that starts resolving elsewhere after registration gets nothing): the dispatcher's DNS lookup is this
 * guard's, so no connection to a refused address is ever opened.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { Agent, type Dispatcher } from 'undici';
import { envFlag } from './env-flag';

/** Resolves a host name to its addresses (tests pass a stub; the default is the system's resolver). */
export type Resolve = (host: string) => Promise<string[]>;

export interface OutboundPolicy {
  /** Plain http:// accepted (PAYSAGA_EVENT_ALLOW_HTTP; `paysaga dev` and tests). */
  allowHttp: boolean;
  /** Host names, addresses and CIDR ranges exempt from the address rule (PAYSAGA_EVENT_ALLOW_HOSTS). */
  allow: string[];
  /** Host names the deployment itself uses: refused even when they resolve to public addresses. */
  own?: string[];
  resolve?: Resolve;
}

/** Why a URL may not receive events: the rule, said to the caller (a 400 naming `url`). */
export class OutboundRefusedError extends Error {
  constructor(readonly rule: string) {
    super(rule);
    this.name = 'OutboundRefusedError';
  }
}

const IPV4_RANGES: [string, number][] = [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // shared address space (CGNAT)
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local: cloud metadata services live here
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24], // 6to4 relay anycast (deprecated, RFC 7526)
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
];

const IPV6_RANGES: [string, number][] = [
  ['::', 96], // unspecified, loopback, and the deprecated IPv4-compatible form (::a.b.c.d)
  ['::ffff:0:0:0', 96], // IPv4-translated (RFC 6145)
  ['64:ff9b::', 96], // NAT64, well-known prefix: an IPv4 address behind a prefix
  ['64:ff9b:1::', 48], // NAT64, local use (RFC 8215)
  ['100::', 64], // discard
  ['2001::', 32], // Teredo: tunnels to an (obfuscated) IPv4 address
  ['2001:2::', 48], // benchmarking
  ['2001:10::', 28], // ORCHID (deprecated)
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4: an IPv4 address behind a prefix (deprecated, RFC 7526)
  ['3fff::', 20], // documentation
  ['5f00::', 16], // segment routing
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
];

// IPv4-mapped IPv6 addresses (::ffff:10.0.0.1) are checked against the IPv4 ranges by BlockList itself.
const internal = new BlockList();
for (const [address, prefix] of IPV4_RANGES) internal.addSubnet(address, prefix, 'ipv4');
for (const [address, prefix] of IPV6_RANGES) internal.addSubnet(address, prefix, 'ipv6');

/**
 * The IPv6 forms that carry an IPv4 address a packet ends up at: NAT64's well-known prefix (the last 32
 * bits, RFC 6052) and 6to4 (the 32 bits after 2002::/16, RFC 3056); IPv4-mapped addresses BlockList
 * matches against IPv4 ranges itself. Each takes an IPv4 range to the IPv6 range of its addresses.
 */
const EMBEDDINGS: ((address: string, prefix: number) => [string, number])[] = [
  (address, prefix) => [`64:ff9b::${address}`, 96 + prefix],
  (address, prefix) => {
    const [a, b, c, d] = address.split('.').map((x) => Number(x).toString(16).padStart(2, '0'));
    return [`2002:${a}${b}:${c}${d}::`, 16 + prefix];
  },
];

/** IPv4 ranges and their images in every embedding: what an IPv4 rule says about IPv6 addresses too. */
function withEmbeddings(ranges: [string, number][]): BlockList {
  const list = new BlockList();
  for (const [address, prefix] of ranges) {
    list.addSubnet(address, prefix, 'ipv4');
    for (const embed of EMBEDDINGS) list.addSubnet(...embed(address, prefix), 'ipv6');
  }
  return list;
}

/** IPv6 addresses whose IPv4 address is one of the refused ones. */
const internalEmbedded = withEmbeddings(IPV4_RANGES);

const familyOf = (address: string): 'ipv4' | 'ipv6' => (isIP(address) === 6 ? 'ipv6' : 'ipv4');
const bare = (host: string) => host.replace(/^\[|\]$/g, '').toLowerCase();
/** A host as compared here: no IPv6 brackets, lower case, no trailing dot. */
const hostName = (host: string) => bare(host).replace(/\.$/, '');

interface AllowList {
  names: Set<string>;
  ranges: BlockList;
  /** The IPv4 ranges allowed, with their images in the IPv6 forms that embed an IPv4 address. */
  embedded: BlockList;
}

/** An allow-list entry: a host name (exact), an address, or a CIDR range. Throws on a malformed range. */
function allowList(entries: string[]): AllowList {
  const names = new Set<string>();
  const ranges = new BlockList();
  const ipv4: [string, number][] = [];
  for (const raw of entries.map((e) => e.trim()).filter(Boolean)) {
    const [address, prefix] = raw.split('/') as [string, string | undefined];
    const ip = bare(address);
    if (isIP(ip) === 0) {
      if (prefix !== undefined) throw new Error(`not an address range: ${raw}`);
      names.add(ip.replace(/\.$/, ''));
      continue;
    }
    const bits = prefix === undefined ? (isIP(ip) === 6 ? 128 : 32) : Number(prefix);
    if (!Number.isInteger(bits) || bits < 0 || bits > (isIP(ip) === 6 ? 128 : 32))
      throw new Error(`not an address range: ${raw}`);
    ranges.addSubnet(ip, bits, familyOf(ip));
    if (familyOf(ip) === 'ipv4') ipv4.push([ip, bits]);
  }
  return { names, ranges, embedded: withEmbeddings(ipv4) };
}

const systemResolve: Resolve = (host) =>
  new Promise((resolve, reject) =>
    dnsLookup(host, { all: true, verbatim: true }, (err, addresses) =>
      err ? reject(err) : resolve(addresses.map((a) => a.address)),
    ),
  );

export class OutboundGuard {
  private readonly allowed: AllowList;
  private readonly own: Set<string>;
  private readonly resolve: Resolve;
  private agent: Agent | undefined;

  constructor(private readonly policy: OutboundPolicy) {
    this.allowed = allowList(policy.allow);
    this.own = new Set((policy.own ?? []).map(hostName).filter(Boolean));
    this.resolve = policy.resolve ?? systemResolve;
  }

  /** The scheme and host of a URL, before any lookup. Throws OutboundRefusedError. */
  checkUrl(url: string): URL {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      throw new OutboundRefusedError('an http:// or https:// URL');
    }
    if (u.protocol !== 'https:' && !(u.protocol === 'http:' && this.policy.allowHttp))
      throw new OutboundRefusedError(
        this.policy.allowHttp || u.protocol !== 'http:'
          ? 'an http:// or https:// URL'
          : 'an https:// URL (plain http is allowed only where PAYSAGA_EVENT_ALLOW_HTTP is set)',
      );
    if (u.username || u.password) throw new OutboundRefusedError('a URL without credentials in it');
    const host = hostName(u.hostname);
    // Addresses are the address rule's; a name the deployment uses is refused even if it resolves out.
    if (!isIP(host) && this.own.has(host) && !this.allowed.names.has(host))
      throw new OutboundRefusedError(`a host outside this deployment (${host} is one of its own services)`);
    return u;
  }

  /**
   * At registration: the URL's scheme, host and every address its host resolves to now. Throws
   * OutboundRefusedError.
   */
  async check(url: string): Promise<void> {
    const host = hostName(this.checkUrl(url).hostname);
    if (this.allowed.names.has(host)) return;
    let addresses = [host];
    if (!isIP(host)) {
      try {
        addresses = await this.addressesOf(host);
      } catch {
        return; // not resolvable yet (DNS set up later): each delivery's lookup decides
      }
    }
    this.checkAddresses(host, addresses);
  }

  /**
   * Before a delivery: the scheme, the deployment's own hosts and an address written in the URL (a
   * socket to an address literal asks no lookup); names are checked by the dispatcher's lookup.
   */
  checkBeforeSend(url: string): void {
    const host = hostName(this.checkUrl(url).hostname);
    if (isIP(host) && !this.allowed.names.has(host)) this.checkAddresses(host, [host]);
  }

  /**
   * The undici dispatcher deliveries go through: its DNS lookup is the guard's, so the addresses checked
   * are the ones connected to. Redirects are never followed (undici's request does not, and no redirect
   * interceptor is added): a 3xx is an answer like any other non-2xx.
   */
  dispatcher(): Dispatcher {
    this.agent ??= new Agent({
      connect: { lookup: (host, options, callback) => this.lookup(host, options, callback) },
    });
    return this.agent;
  }

  async close(): Promise<void> {
    await this.agent?.close();
  }

  private async addressesOf(host: string): Promise<string[]> {
    try {
      const found = await this.resolve(host);
      if (found.length === 0) throw new Error('no addresses');
      return found;
    } catch {
      throw new OutboundRefusedError(`a host name that resolves (${host} does not)`);
    }
  }

  private checkAddresses(host: string, addresses: string[]): void {
    for (const address of addresses) {
      const family = familyOf(address);
      // An address that carries an IPv4 one reaches that IPv4 address: the IPv4 rules judge it, even
      // when its IPv6 prefix is allowed (a deployment behind NAT64 allows 64:ff9b::/96).
      if (
        family === 'ipv6' &&
        internalEmbedded.check(address, family) &&
        !this.allowed.embedded.check(address, family)
      )
        throw new OutboundRefusedError(
          `a public address (${host} resolves to an IPv6 address that carries a loopback, link-local, ` +
            'private or reserved IPv4 address; PAYSAGA_EVENT_ALLOW_HOSTS can name it)',
        );
      if (this.allowed.ranges.check(address, family)) continue;
      if (internal.check(address, family))
        throw new OutboundRefusedError(
          `a public address (${host} resolves to a loopback, link-local, private or reserved address; ` +
            'PAYSAGA_EVENT_ALLOW_HOSTS can name it)',
        );
    }
  }

  private lookup(
    host: string,
    options: LookupOptions,
    callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ): void {
    const name = hostName(host);
    const resolved = isIP(name) ? Promise.resolve([name]) : this.addressesOf(name);
    resolved
      .then((addresses) => {
        if (!this.allowed.names.has(name)) this.checkAddresses(name, addresses);
        const wanted = options.family === 4 || options.family === 6 ? options.family : 0;
        const usable = addresses.filter((a) => wanted === 0 || isIP(a) === wanted);
        if (usable.length === 0)
          throw new OutboundRefusedError(`a host name that resolves (${name} does not)`);
        if (options.all)
          callback(
            null,
            usable.map((address) => ({ address, family: isIP(address) })),
          );
        else callback(null, usable[0]!, isIP(usable[0]!));
      })
      .catch((err: Error) => callback(Object.assign(err, { code: 'EPAYSAGAGUARD' }), ''));
  }
}

/** The host of each URL or `host:port` given (Temporal's address, the store's URL, the public URL). */
export function hostsOf(addresses: (string | undefined)[]): string[] {
  const hosts: string[] = [];
  for (const a of addresses.map((x) => x?.trim()).filter((x): x is string => !!x)) {
    try {
      hosts.push(bare(new URL(a.includes('://') ? a : `tcp://${a}`).hostname));
    } catch {
      // Not an address: whoever reads that setting reports it.
    }
  }
  return hosts;
}

/**
 * The policy from the environment: PAYSAGA_EVENT_ALLOW_HTTP (true/false), PAYSAGA_EVENT_ALLOW_HOSTS
 * (comma-separated names, addresses, CIDR ranges), and the deployment's own hosts (`own`: Temporal's
 * address; the store's and the public URL's hosts are read here).
 */
export function outboundPolicyFromEnv(env: NodeJS.ProcessEnv, own: string[] = []): OutboundPolicy {
  const allowHttp = envFlag(env, 'PAYSAGA_EVENT_ALLOW_HTTP');
  const allow = (env.PAYSAGA_EVENT_ALLOW_HOSTS ?? '')
    .split(',')
    .map((h) => h.trim())
    .filter(Boolean);
  allowList(allow); // a malformed entry is reported at start, not at the first delivery
  return {
    allowHttp,
    allow,
    own: [...own, ...hostsOf([env.PAYSAGA_DATABASE_URL, env.PAYSAGA_PUBLIC_URL])],
  };
}
