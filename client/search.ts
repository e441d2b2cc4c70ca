/**
 * Finding sessions (GET /v1/sessions) and subscriptions (GET /v1/subscriptions) in the store: newest
 * first by (created time, id), a stable order whatever is added meanwhile; each filter has its index
 * (store/migrations/); a page's cursor is the position of its last entry, bound to the filters it was
 * made with.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import {
  SESSION_KINDS,
  SESSION_PHASES,
  SUBSCRIPTION_STATUSES,
  type SessionKind,
  type SessionPhase,
  type SubscriptionStatus,
} from '../common/kinds';
import type { SessionSummary, SubscriptionSummary } from '../common/views';
import { InputValidationError } from './errors';
import { reference as referenceSchema } from './inputs';
import type { Store } from '../store/database';
import { searchSessions as searchStoredSessions, type SessionCursor } from '../store/sessions';
import { searchSubscriptions as searchStoredSubscriptions } from '../store/subscriptions';
import { sessionViewOf } from '../common/session-view';

export const MAX_SEARCH_LIMIT = 100;
export const DEFAULT_SEARCH_LIMIT = 20;

/**
 * One value or several (comma-separated, or the parameter repeated), each one of `values`. The rule is a
 * pattern, so the OpenAPI document states exactly what is accepted.
 */
function oneOrMore<T extends string>(values: readonly T[], what: string) {
  const rule = `one or more of ${values.join(', ')} (comma-separated)`;
  const one = `(${values.join('|')})`;
  // Each value at most once is all that makes sense: a longer list is refused, not split.
  const longest = values.join(',').length;
  const list = z
    .string()
    .max(longest, rule)
    .regex(new RegExp(`^${one}(,${one})*$`), rule);
  return z
    .union([list, z.array(list).min(1).max(values.length, rule)], { error: rule })
    .transform((v) => [...new Set((Array.isArray(v) ? v : [v]).flatMap((s) => s.split(',')))] as T[])
    .describe(`${what}, or several comma-separated: ${values.join(', ')}`);
}

const TIME_RULE =
  'an ISO 8601 time with its offset (2025-01-31T12:00:00Z) or a date (2025-01-31, UTC midnight)';
const time = (what: string) =>
  z
    .union([z.iso.datetime({ offset: true }), z.iso.date()], { error: TIME_RULE })
    .transform((s) => new Date(s))
    .describe(`ISO 8601 time (with offset) or date: ${what}`);

function searchInput<T extends string>(statuses: readonly T[], status: string) {
  return z.object({
    reference: referenceSchema.optional().describe('The reference the session was created with (exact)'),
    status: oneOrMore(statuses, status).optional(),
    created_from: time('created at or after').optional(),
    created_to: time(
      'created before (at or before created_from: an empty range, nothing matches)',
    ).optional(),
    limit: z.coerce
      .number({ error: `a whole number, 1 to ${MAX_SEARCH_LIMIT}` })
      .int(`a whole number, 1 to ${MAX_SEARCH_LIMIT}`)
      .min(1, `a whole number, 1 to ${MAX_SEARCH_LIMIT}`)
      .max(MAX_SEARCH_LIMIT, `a whole number, 1 to ${MAX_SEARCH_LIMIT}`)
      .default(DEFAULT_SEARCH_LIMIT)
      .describe(`Entries per page (default ${DEFAULT_SEARCH_LIMIT})`),
    cursor: z.string().min(1).max(8_192).optional().describe('`next` of the previous page, unchanged'),
  });
}

const AMOUNT_RULE = 'a whole number of minor units, 0 or more';
const amount = (what: string) =>
  z.coerce
    .number({ error: AMOUNT_RULE })
    .int(AMOUNT_RULE)
    .min(0, AMOUNT_RULE)
    .max(Number.MAX_SAFE_INTEGER, AMOUNT_RULE)
    .describe(`Minor units: ${what}`);

export const sessionSearchInput = searchInput(SESSION_PHASES, 'Phase').extend({
  kind: oneOrMore(SESSION_KINDS, 'Kind').optional(),
  amount_min: amount('the amount (or what a partial finalize charged) at least this').optional(),
  amount_max: amount(
    'the amount at most this (below amount_min: an empty range, nothing matches)',
  ).optional(),
  needs_attention: z
    .enum(['true', 'false'], { error: 'true or false' })
    .transform((v) => v === 'true')
    .optional()
    .describe('Only sessions that need attention (true), or only those that do not (false)'),
  customer_id: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe("The payer's id in the partner's system (customer.user_id), exact"),
});
export const subscriptionSearchInput = searchInput(SUBSCRIPTION_STATUSES, 'Status');

/** `GET /v1/sessions` parameters (the HTTP names, also in the TypeScript clients). */
export interface SessionSearch {
  reference?: string;
  /** A phase, or several: `succeeded,failed` or an array. */
  status?: SessionPhase | SessionPhase[] | string;
  kind?: SessionKind | SessionKind[] | string;
  /** ISO time, inclusive. */
  created_from?: string;
  /** ISO time, exclusive. */
  created_to?: string;
  /** 1 to 100, default 20. */
  limit?: number | string;
  /** `next` of the previous page (the same filters). */
  cursor?: string;
  /** Minor units, inclusive. */
  amount_min?: number | string;
  amount_max?: number | string;
  needs_attention?: boolean | 'true' | 'false';
  customer_id?: string;
}

export interface SubscriptionSearch extends Omit<
  SessionSearch,
  'status' | 'kind' | 'amount_min' | 'amount_max' | 'needs_attention' | 'customer_id'
> {
  status?: SubscriptionStatus | SubscriptionStatus[] | string;
}

export interface SearchPage {
  /** Another page may follow (it may also come back empty). */
  hasMore: boolean;
  /** The cursor of the next page, with the same filters. */
  next?: string;
}
export interface SessionPage extends SearchPage {
  sessions: SessionSummary[];
}
export interface SubscriptionPage extends SearchPage {
  subscriptions: SubscriptionSummary[];
}

/** The parameters a listing takes; any other is refused by name (a misspelt filter would list everything). */
export function checkParameters(input: Record<string, unknown>, schema: z.ZodObject): void {
  const known = Object.keys(schema.shape);
  const unknown = Object.keys(input).filter((k) => !known.includes(k));
  if (unknown.length > 0)
    throw new InputValidationError(
      unknown.map((field) => ({ field, rule: `not a parameter here; use ${known.join(', ')}` })),
    );
}

/** Parameters matched as given, not read as a number, a flag, a list or a time. */
const EXACT_TEXT = new Set(['customer_id']);

/**
 * Refuses the query parameters given empty (or white space only), by name: no value of any kind a route reads from them
 * (`?amount_min=` would read as 0, `?wait=` as no wait). Exact text is matched as it is: a payer's id
 * may be white space, as the provider takes it.
 */
export function refuseBlankParameters(query: Record<string, unknown>): void {
  const blank = Object.keys(query).filter(
    (k) => !EXACT_TEXT.has(k) && typeof query[k] === 'string' && !String(query[k]).trim(),
  );
  if (blank.length > 0)
    throw new InputValidationError(blank.map((field) => ({ field, rule: 'a value (it is empty)' })));
}

function parseSearch<S extends z.ZodObject>(schema: S, input: unknown): z.output<S> {
  const given = (input ?? {}) as Record<string, unknown>;
  if (typeof given !== 'object' || Array.isArray(given))
    throw new InputValidationError([{ field: '(query)', rule: 'search parameters' }]);
  const defined = Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined));
  checkParameters(defined, schema);
  refuseBlankParameters(defined);
  const r = schema.safeParse(defined);
  if (!r.success) throw InputValidationError.fromZod(r.error);
  // A range that ends where or before it starts is empty, not wrong: it matches nothing. (A rule
  // comparing two parameters is one the OpenAPI document could not state.)
  return r.data;
}

// ---- the cursor: the position of a page's last entry, bound to the search it belongs to ----

interface Cursor {
  v: 1;
  /** A digest of the filters (a cursor answers only the search that made it). */
  f: string;
  /** Where the next page starts: [created time, id] of the last entry. */
  t: string;
}

const CURSOR_RULE = 'the next of an earlier page, as it was';

function filterDigest(what: string, filters: object): string {
  return createHash('sha256')
    .update(JSON.stringify([what, filters]))
    .digest('base64url')
    .slice(0, 16);
}

function encodeCursor(digest: string, last: { createdAt: string; id: string }): string {
  const c: Cursor = { v: 1, f: digest, t: JSON.stringify([last.createdAt, last.id]) };
  return Buffer.from(JSON.stringify(c)).toString('base64url');
}

/** The position a cursor names; a 400 naming `cursor` for anything else, or for other filters. */
function decodeCursor(cursor: string, digest: string): SessionCursor {
  let c: Partial<Cursor> | undefined;
  try {
    c = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Partial<Cursor>;
  } catch {
    c = undefined;
  }
  if (!c || c.v !== 1 || typeof c.t !== 'string' || typeof c.f !== 'string')
    throw new InputValidationError([{ field: 'cursor', rule: CURSOR_RULE }]);
  if (c.f !== digest)
    throw new InputValidationError([
      { field: 'cursor', rule: 'belongs to a search with other filters: send the same filters again' },
    ]);
  const [createdAt, id] = (() => {
    try {
      return JSON.parse(c.t) as [unknown, unknown];
    } catch {
      return [undefined, undefined];
    }
  })();
  if (typeof createdAt !== 'string' || typeof id !== 'string' || Number.isNaN(Date.parse(createdAt)))
    throw new InputValidationError([{ field: 'cursor', rule: CURSOR_RULE }]);
  return { createdAt: new Date(createdAt), id };
}

/** Payment sessions in the store, newest first, a page at a time. */
export async function searchSessions(store: Store, input: unknown): Promise<SessionPage> {
  const q = parseSearch(sessionSearchInput, input);
  const { limit, cursor, ...filters } = q;
  const digest = filterDigest('sessions', filters);
  const after = cursor !== undefined ? decodeCursor(cursor, digest) : undefined;
  const states = await searchStoredSessions(
    store,
    {
      ...(q.reference !== undefined ? { reference: q.reference } : {}),
      ...(q.status ? { phases: q.status } : {}),
      ...(q.kind ? { kinds: q.kind } : {}),
      ...(q.created_from ? { createdFrom: q.created_from } : {}),
      ...(q.created_to ? { createdTo: q.created_to } : {}),
      ...(q.amount_min !== undefined ? { amountMin: q.amount_min } : {}),
      ...(q.amount_max !== undefined ? { amountMax: q.amount_max } : {}),
      ...(q.needs_attention !== undefined ? { needsAttention: q.needs_attention } : {}),
      ...(q.customer_id !== undefined ? { customerId: q.customer_id } : {}),
    },
    { limit: limit + 1, ...(after ? { after } : {}) },
  );
  const page = states.slice(0, limit);
  const hasMore = states.length > limit;
  const last = page.at(-1);
  const sessions = page.map((state): SessionSummary => {
    const view = sessionViewOf(state);
    const amount = state.finalizeAmount ?? state.request.money?.amount;
    return {
      sessionId: state.sessionId,
      kind: state.kind,
      reference: state.reference,
      phase: view.phase,
      ...(amount !== undefined ? { amount } : {}),
      ...(state.request.money ? { currency: state.request.money.currency } : {}),
      createdAt: state.createdAt,
      needsAttention: state.attention !== undefined,
    };
  });
  return {
    sessions,
    hasMore,
    ...(hasMore && last
      ? { next: encodeCursor(digest, { createdAt: last.createdAt, id: last.sessionId }) }
      : {}),
  };
}

/** Subscriptions in the store, the same way. */
export async function searchSubscriptions(store: Store, input: unknown): Promise<SubscriptionPage> {
  const q = parseSearch(subscriptionSearchInput, input);
  const { limit, cursor, ...filters } = q;
  const digest = filterDigest('subscriptions', filters);
  const after = cursor !== undefined ? decodeCursor(cursor, digest) : undefined;
  const views = await searchStoredSubscriptions(
    store,
    {
      ...(q.reference !== undefined ? { reference: q.reference } : {}),
      ...(q.status ? { statuses: q.status } : {}),
      ...(q.created_from ? { createdFrom: q.created_from } : {}),
      ...(q.created_to ? { createdTo: q.created_to } : {}),
    },
    { limit: limit + 1, ...(after ? { after } : {}) },
  );
  const page = views.slice(0, limit);
  const hasMore = views.length > limit;
  const last = page.at(-1);
  const subscriptions = page.map((v): SubscriptionSummary => ({
    subscriptionId: v.subscriptionId,
    reference: v.reference,
    status: v.status,
    amount: v.amount.amount,
    currency: v.amount.currency,
    createdAt: v.createdAt,
    needsAttention: v.attention !== undefined,
  }));
  return {
    subscriptions,
    hasMore,
    ...(hasMore && last
      ? { next: encodeCursor(digest, { createdAt: last.createdAt, id: last.subscriptionId }) }
      : {}),
  };
}
