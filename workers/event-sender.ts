/**
 * One delivery attempt: the event as one signed POST (platform/event-signature.ts), never failing for an
 * HTTP reason: the outcome is an attempt record (status and latency, or why no answer came).
 */
import { request } from 'undici';
import type { DeliveryAttempt } from '../common/event-delivery';
import { EVENT_ID_HEADER, EVENT_SIGNATURE_HEADER, type PaysagaEvent } from '../common/events';
import { eventSignatureHeader } from '../platform/event-signature';
import { OutboundRefusedError, type OutboundGuard } from '../platform/outbound-guard';

const USER_AGENT = 'paysaga-events/1';

export async function sendEvent(o: {
  url: string;
  event: PaysagaEvent;
  secrets: string[];
  timeoutMs: number;
  redelivery?: boolean;
  /** Checks the URL and every address connected to (platform/outbound-guard.ts). */
  guard: OutboundGuard;
}): Promise<DeliveryAttempt> {
  const at = new Date();
  const base = { at: at.toISOString(), ...(o.redelivery ? { redelivery: true } : {}) };
  const body = JSON.stringify(o.event);
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const signal = AbortSignal.timeout(o.timeoutMs);
  try {
    o.guard.checkBeforeSend(o.url);
    const res = await request(o.url, {
      dispatcher: o.guard.dispatcher(),
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        [EVENT_ID_HEADER.toLowerCase()]: o.event.id,
        [EVENT_SIGNATURE_HEADER.toLowerCase()]: eventSignatureHeader(body, o.secrets),
      },
      body,
      signal,
      // One connection per delivery: endpoints are many and far between, nothing lingers.
      reset: true,
    });
    const latencyMs = elapsed();
    await res.body.dump().catch(() => undefined);
    return { ...base, latencyMs, status: res.statusCode };
  } catch (err) {
    const error = signal.aborted ? `no answer within ${o.timeoutMs} ms` : publicReason(err);
    return { ...base, latencyMs: elapsed(), error };
  }
}

/** What failed, said so that the delivery log names no address, port or internal detail. */
const REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection reset',
  UND_ERR_SOCKET: 'connection reset',
  ENOTFOUND: 'host name not found',
  EAI_AGAIN: 'host name not found',
  ETIMEDOUT: 'connection timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'host unreachable',
};

function publicReason(err: unknown): string {
  const chain: unknown[] = [];
  for (let e: unknown = err; e && chain.length < 5; e = (e as { cause?: unknown }).cause) chain.push(e);
  const refused = chain.find((e) => e instanceof OutboundRefusedError);
  if (refused) return `refused by the outbound guard: ${(refused as OutboundRefusedError).rule}`;
  for (const e of chain) {
    const code = (e as { code?: unknown }).code;
    if (typeof code !== 'string') continue;
    if (REASONS[code]) return REASONS[code];
    if (code.startsWith('ERR_TLS') || code.includes('CERT') || code.startsWith('ERR_SSL'))
      return 'TLS failure';
  }
  return 'connection failed';
}
