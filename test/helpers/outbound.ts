/**
 * The outbound guard of test stacks: `paysaga dev`'s policy (plain http, loopback allowed) with a
 * resolver that answers `localhost` only, so no test's event endpoint makes a DNS query leave the
 * machine or a delivery reach anything but loopback.
 */
import type { OutboundPolicy } from '../../platform/outbound-guard';

export const LOOPBACK_ALLOWED = ['localhost', '127.0.0.0/8', '::1'];

export async function loopbackOnly(host: string): Promise<string[]> {
  if (host === 'localhost') return ['127.0.0.1'];
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
}

export function testOutboundPolicy(): OutboundPolicy {
  return { allowHttp: true, allow: LOOPBACK_ALLOWED, resolve: loopbackOnly };
}
