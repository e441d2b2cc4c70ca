/**
 * PAYSAGA_TRUST_PROXY: the proxies in front of the API (load balancers, TLS terminators), as addresses
 * and CIDR ranges, comma-separated; unset, none. Only a request whose socket comes from one of them has
 * its X-Forwarded-For read: the client address is then the last one in that header that is not a
 * trusted proxy (fastify's `trustProxy`, proxy-addr), so a client cannot choose its own address by
 * prepending to the header. Everything per address (the refused-token limit, the public listener's
 * request limit, the logs' `remoteAddress`) uses that client address. A header from any other peer is
 * ignored.
 */
import { isIP } from 'node:net';

export const TRUST_PROXY_VARIABLE = 'PAYSAGA_TRUST_PROXY';

/** The trusted proxies' addresses and ranges; empty: X-Forwarded-For is never read. Throws on a bad entry. */
export function trustProxyFromEnv(env: NodeJS.ProcessEnv): string[] {
  const entries = (env[TRUST_PROXY_VARIABLE] ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  for (const entry of entries) {
    const [address, prefix, extra] = entry.split('/');
    const family = isIP(address ?? '');
    const max = family === 6 ? 128 : 32;
    const bits = prefix === undefined ? max : Number(prefix);
    if (
      family === 0 ||
      extra !== undefined ||
      (prefix !== undefined && !/^\d+$/.test(prefix)) ||
      !(bits >= 0 && bits <= max)
    )
      throw new Error(
        `${TRUST_PROXY_VARIABLE}: ${entry} is not an address or a CIDR range (list the proxies in front ` +
          'of the API, e.g. 10.0.0.5,10.1.0.0/16)',
      );
    // A range that holds every address would let any client pick the address it is counted under.
    if (bits === 0)
      throw new Error(
        `${TRUST_PROXY_VARIABLE}: ${entry} would trust X-Forwarded-For from every client; list the proxies`,
      );
  }
  return entries;
}
