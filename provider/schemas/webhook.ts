import { z } from 'zod';
import { sessionInfo } from './session';
import { describeIssue } from './validation';

export const WEBHOOK_TYPES = [
  'approve_pending',
  'finalization_pending',
  'action_pending',
  'checkout_results',
  'checkout_refunded',
] as const;
export type WebhookType = (typeof WEBHOOK_TYPES)[number];

/** Unknown event types are kept (the set may grow); the receiver decides what to do with them. */
export const webhookEvent = z.looseObject({ type: z.string().min(1), session_info: sessionInfo });
export type WebhookEvent = z.infer<typeof webhookEvent>;

export type WebhookBodyReading =
  | { ok: true; event: WebhookEvent }
  | { ok: false; reason: 'malformed_json' | 'invalid_event' | 'ill_formed_text'; detail: string };

/** ES2024's String.prototype.isWellFormed (Node 20 has it; the TypeScript lib here is ES2022). */
export function isWellFormedText(s: string): boolean {
  return (s as string & { isWellFormed(): boolean }).isWellFormed();
}

/**
 * Where in a parsed JSON value a string (a value or a key) holds a lone UTF-16 surrogate (`"\ud800"` is
 * valid JSON, but no text: encoded as UTF-8 it becomes U+FFFD, so two readers of it could disagree);
 * undefined when every string is text. Iterative, so no depth of nesting exhausts the stack.
 */
function illFormedAt(json: unknown): string | undefined {
  const stack: [unknown, string][] = [[json, '']];
  while (stack.length > 0) {
    const [value, path] = stack.pop()!;
    if (typeof value === 'string') {
      if (!isWellFormedText(value)) return path || '(the body)';
    } else if (Array.isArray(value)) {
      value.forEach((v, i) => stack.push([v, `${path}[${i}]`]));
    } else if (value !== null && typeof value === 'object') {
      for (const [key, v] of Object.entries(value)) {
        if (!isWellFormedText(key)) return `${path || '(the body)'}: a key`;
        stack.push([v, path ? `${path}.${key}` : key]);
      }
    }
  }
  return undefined;
}

/**
 * A webhook body whose signature was verified, read as the event it says (the same for every reader). Text that is not well-formed (a lone
 * surrogate, raw or escaped in a JSON string) is refused, never read one way here and another elsewhere.
 */
export function readWebhookEvent(body: string): WebhookBodyReading {
  if (!isWellFormedText(body))
    return { ok: false, reason: 'ill_formed_text', detail: 'body: a lone UTF-16 surrogate, not text' };
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { ok: false, reason: 'malformed_json', detail: 'body is not JSON' };
  }
  const at = illFormedAt(json);
  if (at !== undefined)
    return {
      ok: false,
      reason: 'ill_formed_text',
      detail: `${at}: a JSON string with a lone UTF-16 surrogate (\\ud800-\\udfff unpaired), not text`,
    };
  const parsed = webhookEvent.safeParse(json);
  if (!parsed.success)
    return { ok: false, reason: 'invalid_event', detail: describeIssue(parsed.error.issues[0]!, json) };
  return { ok: true, event: parsed.data };
}
