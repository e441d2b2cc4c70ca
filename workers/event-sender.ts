/**
 * One delivery attempt: the event as one signed POST (common/event-signature.ts), never failing for an
 * HTTP reason: the outcome is an attempt record (status and latency, or why no answer came).
 */
import { request } from 'undici';
import type { DeliveryAttempt } from '../common/event-delivery';
import { EVENT_ID_HEADER, EVENT_SIGNATURE_HEADER, type PaysagaEvent } from '../common/events';
import { eventSignatureHeader } from '../common/event-signature';

const USER_AGENT = 'paysaga-events/1';

export async function sendEvent(o: {
  url: string;
  event: PaysagaEvent;
  secrets: string[];
  timeoutMs: number;
  redelivery?: boolean;
}): Promise<DeliveryAttempt> {
  const at = new Date();
  const base = { at: at.toISOString(), ...(o.redelivery ? { redelivery: true } : {}) };
  const body = JSON.stringify(o.event);
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const signal = AbortSignal.timeout(o.timeoutMs);
  try {
    const res = await request(o.url, {
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
    const error = signal.aborted ? `no answer within ${o.timeoutMs} ms` : message(err);
    return { ...base, latencyMs: elapsed(), error };
  }
}

/** A network failure as a short line: the code (ECONNREFUSED, ...) and message, never a body. */
function message(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown; cause?: { code?: unknown; message?: unknown } };
  const code =
    typeof e?.code === 'string' ? e.code : typeof e?.cause?.code === 'string' ? e.cause.code : undefined;
  const text = typeof e?.message === 'string' ? e.message : String(err);
  return code && !text.includes(code) ? `${code}: ${text}` : text;
}
