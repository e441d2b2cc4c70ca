/**
 * Card data the partner holds. The real values are reachable only through `revealCard`,
 * which the request serializer uses; everything else (JSON, string, inspect, pino) sees BIN + last 4.
 */
const secrets = new WeakMap<object, Readonly<Record<string, string>>>();

function maskPan(pan: string): string {
  if (pan.length < 10) return `${'*'.repeat(Math.max(0, pan.length - 4))}${pan.slice(-4)}`;
  return `${pan.slice(0, 6)}${'*'.repeat(pan.length - 10)}${pan.slice(-4)}`;
}

function maskOpaque(value: string): string {
  return value.length <= 4 ? '****' : `****${value.slice(-4)}`;
}

abstract class SensitiveCard {
  protected constructor(fields: Record<string, string>) {
    secrets.set(this, Object.freeze({ ...fields }));
  }
  abstract masked(): Record<string, string>;
  toJSON(): Record<string, string> {
    return this.masked();
  }
  toString(): string {
    return `${this.constructor.name}(${Object.values(this.masked()).join(' ')})`;
  }
  // Node's `util.inspect.custom`, by its registered name: the contract loads in any runtime (the
  // workflow bundle too), and console.log / util.inspect still see the masked form.
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return this.toString();
  }
}

export interface CardDetailsInput {
  card_number: string;
  card_exp_month?: string;
  card_exp_year?: string;
  card_code?: string;
}

/** Raw card details (PAN, expiry, CVV). */
export class CardDetails extends SensitiveCard {
  readonly bin: string;
  readonly last4: string;
  readonly hasCode: boolean;
  constructor(input: CardDetailsInput) {
    const fields: Record<string, string> = { card_number: input.card_number };
    if (input.card_exp_month !== undefined) fields.card_exp_month = input.card_exp_month;
    if (input.card_exp_year !== undefined) fields.card_exp_year = input.card_exp_year;
    if (input.card_code !== undefined) fields.card_code = input.card_code;
    super(fields);
    this.bin = input.card_number.slice(0, 6);
    this.last4 = input.card_number.slice(-4);
    this.hasCode = input.card_code !== undefined;
  }
  masked(): Record<string, string> {
    const f = secrets.get(this)!;
    const out: Record<string, string> = { card_number: maskPan(f.card_number!) };
    if (f.card_exp_month !== undefined) out.card_exp_month = f.card_exp_month;
    if (f.card_exp_year !== undefined) out.card_exp_year = f.card_exp_year;
    if (f.card_code !== undefined) out.card_code = '***';
    return out;
  }
}

export interface HashedCardDetailsInput {
  hashed_card_number?: string;
  hashed_card_exp_date?: string;
  hashed_name_on_card?: string;
  hashed_card_code?: string;
}

/** Card data hashed by the tokenization widget: still card data, kept out of logs and Temporal alike. */
export class HashedCardDetails extends SensitiveCard {
  constructor(input: HashedCardDetailsInput) {
    const fields: Record<string, string> = {};
    for (const [k, v] of Object.entries(input)) if (typeof v === 'string') fields[k] = v;
    super(fields);
  }
  masked(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(secrets.get(this)!)) out[k] = maskOpaque(v);
    return out;
  }
}

export function isSensitiveCard(value: unknown): value is CardDetails | HashedCardDetails {
  return value instanceof SensitiveCard;
}

/** The real fields, for the request serializer and the sandbox only. */
export function revealCard(card: CardDetails | HashedCardDetails): Record<string, string> {
  return { ...secrets.get(card)! };
}

/**
 * Replaces anything that looks like a PAN in free text (an upstream error description, a log line): 13 to
 * 19 digits, also written in groups with single spaces or dashes (`4111 1111 1111 1111`,
 * `4111-1111-1111-1111`), masked as BIN + last 4 of its digits.
 */
export function redactPans(text: string): string {
  return text.replace(/\b\d(?:[ -]?\d){12,18}\b/g, (m) => maskPan(m.replace(/[ -]/g, '')));
}

/**
 * Field names that hold card data: the provider's request fields, and the names a card goes by elsewhere
 * (a payout destination's `card`, `pan`, `cvv`). Compared without case.
 */
const CARD_FIELDS: ReadonlySet<string> = new Set([
  'card',
  'card_details',
  'hashed_card_details',
  'card_number',
  'card_code',
  'hashed_card_number',
  'hashed_card_code',
  'pan',
  'cvv',
  'cvc',
]);

export const isCardField = (key: string): boolean => CARD_FIELDS.has(key.toLowerCase());

/**
 * A copy of `value` in which every card field says no more than BIN + last 4 (a number) or `****`
 * (a code): what may be hashed or kept where a request must be recognized again (the sandbox's
 * idempotency fingerprints) without keeping anything that leads back to the card.
 */
export function maskCardData<T>(value: T): T {
  if (Array.isArray(value)) return value.map(maskCardData) as T;
  if (!value || typeof value !== 'object' || value instanceof SensitiveCard) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (!isCardField(k)) out[k] = maskCardData(v);
    else if (typeof v === 'string')
      out[k] = /^\d{12,19}$/.test(v.replace(/[ -]/g, '')) ? maskPan(v.replace(/[ -]/g, '')) : '****';
    else out[k] = v && typeof v === 'object' ? maskCardData(v) : v;
  }
  return out as T;
}

/** Defense in depth: a copy of `value` without any card field, whatever the provider echoes. */
export function scrubCardData<T>(value: T): T {
  if (Array.isArray(value)) return value.map(scrubCardData) as T;
  if (!value || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (!isCardField(k)) out[k] = scrubCardData(v);
  return out as T;
}

const MAX_REDACT_DEPTH = 6;

/**
 * For log lines: a copy of plain data with every card field (and each of `alsoSecret`) shown as
 * `[redacted]`, at any depth up to a bound. Class instances (errors, requests, cards, which print
 * masked) are left to their own serializers.
 */
export function redactFields(value: unknown, alsoSecret: readonly string[] = [], depth = 0): unknown {
  if (value === null || typeof value !== 'object' || depth > MAX_REDACT_DEPTH) return value;
  if (Array.isArray(value)) return value.map((v) => redactFields(v, alsoSecret, depth + 1));
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value))
    out[k] =
      isCardField(k) || alsoSecret.some((s) => s.toLowerCase() === k.toLowerCase())
        ? '[redacted]'
        : redactFields(v, alsoSecret, depth + 1);
  return out;
}
