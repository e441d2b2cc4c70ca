import { isSensitiveCard, revealCard } from './schemas/card';

/**
 * The one place card data becomes plain text: the request body sent on the wire.
 * CardDetails print masked everywhere else (toJSON), so this replacer looks at the holder's
 * original value instead of the toJSON result.
 */
function revealingReplacer(this: Record<string, unknown>, key: string, value: unknown): unknown {
  const original = this[key];
  return isSensitiveCard(original) ? revealCard(original) : value;
}

export function serializeRequestBody(body: unknown): Buffer {
  return Buffer.from(JSON.stringify(body ?? {}, revealingReplacer), 'utf8');
}
