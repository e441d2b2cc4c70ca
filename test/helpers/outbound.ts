/**
 * The outbound guard of test stacks: `paysaga dev`'s policy (plain http, loopback allowed) with a
 * resolver that answers `localhost` only, so no test's event endpoint makes a DNS query leave the
 * machine or a delivery reach anything but loopback.
 */
import { OutboundRefusedError, type OutboundGuard, type OutboundPolicy } from '../../platform/outbound-guard';

export const LOOPBACK_ALLOWED = ['localhost', '127.0.0.0/8', '::1'];

export async function loopbackOnly(host: string): Promise<string[]> {
  if (host === 'localhost') return ['127.0.0.1'];
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
}

export function testOutboundPolicy(): OutboundPolicy {
  return { allowHttp: true, allow: LOOPBACK_ALLOWED, resolve: loopbackOnly };
}

/** A resolver that answers the names of `zone` and nothing else; `asked` hears every name looked up. */
export function stubResolver(zone: Record<string, string[]>, asked?: (host: string) => void) {
  return async (host: string): Promise<string[]> => {
    asked?.(host);
    const found = zone[host];
    if (!found) throw Object.assign(new Error(`ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return found;
  };
}

/** The rule the guard refuses `url` by, or undefined when it lets it through. */
export async function refusal(guard: OutboundGuard, url: string): Promise<string | undefined> {
  try {
    await guard.check(url);
    return undefined;
  } catch (err) {
    if (!(err instanceof OutboundRefusedError)) throw err;
    return err.rule;
  }
}
