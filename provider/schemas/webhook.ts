import { z } from 'zod';
import { defineSessionSchemas, sessionInfo } from './session';
import { describeIssue } from './validation';

export const WEBHOOK_TYPES = [
  'approve_pending',
  'finalization_pending',
  'action_pending',
  'checkout_results',
  'checkout_refunded',
] as const;
export type WebhookType = (typeof WEBHOOK_TYPES)[number];

/**
 * Unknown event types are kept (the set may grow); the receiver decides what to do with them. Built by a
 * function for the same reason as defineCommonSchemas (common.ts).
 */
export function defineWebhookEvent(session: typeof sessionInfo = defineSessionSchemas().sessionInfo) {
  return z.looseObject({ type: z.string().min(1), session_info: session });
}
export const webhookEvent = defineWebhookEvent(sessionInfo);
export type WebhookEvent = z.infer<typeof webhookEvent>;

export type WebhookBodyReading =
  | { ok: true; event: WebhookEvent }
  | { ok: false; reason: 'malformed_json' | 'invalid_event'; detail: string };

/**
 * A webhook body whose signature was verified, read as the event it says (the same for every reader;
 * workflow code passes a copy of the schema it built itself).
 */
export function readWebhookEvent(body: string, schema = webhookEvent): WebhookBodyReading {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { ok: false, reason: 'malformed_json', detail: 'body is not JSON' };
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success)
    return { ok: false, reason: 'invalid_event', detail: describeIssue(parsed.error.issues[0]!, json) };
  return { ok: true, event: parsed.data };
}
