/**
 * Finding sessions (GET /v1/sessions) in the store, and subscriptions (GET /v1/subscriptions) through
 * Temporal visibility until subscriptions are recorded in the store too.
 *
 * Sessions: newest first by (created time, session id), a stable order whatever is added meanwhile;
 * each filter has its index (store/migrations/0001-sessions.ts); a page's cursor is the position of its
 * last entry, bound to the filters it was made with.
 *
 * Subscriptions (visibility). SQL visibility stores refuse `ORDER BY` and answer by (close time, newest
 * first, with runs still open before every closed one), then start time, newest first. One entry per
 * subscription: continued-as-new runs are left out by the query itself.
 */
import { createHash } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { decodeTypedSearchAttributes } from '@temporalio/common/lib/converter/payload-search-attributes';
import type { google } from '@temporalio/proto';
import { temporal as proto } from '@temporalio/proto';
import { z } from 'zod';
import {
  SESSION_KINDS,
  SESSION_PHASES,
  SUBSCRIPTION_KIND,
  SUBSCRIPTION_STATUSES,
  type SessionKind,
  type SessionPhase,
  type SubscriptionStatus,
} from '../common/kinds';
import {
  AmountMinor,
  ClientReference,
  CreatedAt,
  CurrencyCode,
  NeedsAttention,
  PaymentKind,
  PaymentStatus,
} from '../common/search-attributes';
import type { SessionSummary, SubscriptionSummary } from '../common/views';
import { InputValidationError } from './errors';
import { reference as referenceSchema } from './inputs';
import type { Store } from '../store/database';
import { searchSessions as searchStoredSessions, type SessionCursor } from '../store/sessions';
import { sessionViewOf } from '../workflows/session-view';

export const MAX_SEARCH_LIMIT = 100;
export const DEFAULT_SEARCH_LIMIT = 20;

type RawExecution = proto.api.workflow.v1.IWorkflowExecutionInfo;
const Status = proto.api.enums.v1.WorkflowExecutionStatus;

/**
 * One value or several (comma-separated, or the parameter repeated), each one of `values`. The rule is a
 * pattern, so the OpenAPI document states exactly what is accepted.
 */
function oneOrMore<T extends string>(values: readonly T[], what: string) {
  const rule = `one or more of ${values.join(', ')} (comma-separated)`;
  const one = `(${values.join('|')})`;
  const list = z.string().regex(new RegExp(`^${one}(,${one})*$`), rule);
  return z
    .union([list, z.array(list).min(1)], { error: rule })
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
    created_to: time('created before').optional(),
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
  amount_max: amount('the amount at most this').optional(),
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

/** The parameters a search takes; any other is refused by name (a misspelt filter would list everything). */
function checkParameters(input: Record<string, unknown>, schema: z.ZodObject): void {
  const known = Object.keys(schema.shape);
  const unknown = Object.keys(input).filter((k) => !known.includes(k));
  if (unknown.length > 0)
    throw new InputValidationError(
      unknown.map((field) => ({ field, rule: `not a parameter here; use ${known.join(', ')}` })),
    );
}

function parseSearch<S extends z.ZodObject>(schema: S, input: unknown): z.output<S> {
  const given = (input ?? {}) as Record<string, unknown>;
  if (typeof given !== 'object' || Array.isArray(given))
    throw new InputValidationError([{ field: '(query)', rule: 'search parameters' }]);
  const defined = Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined));
  checkParameters(defined, schema);
  const r = schema.safeParse(defined);
  if (!r.success) throw InputValidationError.fromZod(r.error);
  const q = r.data as { created_from?: Date; created_to?: Date; amount_min?: number; amount_max?: number };
  if (q.created_from && q.created_to && q.created_from >= q.created_to)
    throw new InputValidationError([{ field: 'created_to', rule: 'later than created_from' }]);
  if (q.amount_min !== undefined && q.amount_max !== undefined && q.amount_min > q.amount_max)
    throw new InputValidationError([{ field: 'amount_max', rule: 'at least amount_min' }]);
  return r.data;
}

// ---- the cursor: visibility's page token, bound to the search it belongs to ----

interface Cursor {
  v: 1;
  /** A digest of the filters (a cursor answers only the search that made it). */
  f: string;
  /** Where the next page starts: visibility's page token (base64), or a position in the store. */
  t: string;
}

function filterDigest(what: string, filters: object): string {
  return createHash('sha256')
    .update(JSON.stringify([what, filters]))
    .digest('base64url')
    .slice(0, 16);
}

function encodeCursor(digest: string, token: Uint8Array | string): string {
  const c: Cursor = { v: 1, f: digest, t: typeof token === 'string' ? token : Buffer.from(token).toString('base64') };
  return Buffer.from(JSON.stringify(c)).toString('base64url');
}

function decodeCursor(cursor: string, digest: string): Buffer {
  return Buffer.from(decodeCursorText(cursor, digest), 'base64');
}

function decodeCursorText(cursor: string, digest: string): string {
  let c: Partial<Cursor> | undefined;
  try {
    c = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Partial<Cursor>;
  } catch {
    c = undefined;
  }
  if (!c || c.v !== 1 || typeof c.t !== 'string' || typeof c.f !== 'string')
    throw new InputValidationError([{ field: 'cursor', rule: 'the next of an earlier page, as it was' }]);
  if (c.f !== digest)
    throw new InputValidationError([
      { field: 'cursor', rule: 'belongs to a search with other filters: send the same filters again' },
    ]);
  return c.t;
}

// ---- visibility ----

const quoted = (xs: readonly string[]) => xs.map((x) => `'${x}'`).join(', ');
/** Workflow ids that can go into a visibility query as they are (session ids: ps_<digits>). */
const SAFE_ID = /^[A-Za-z0-9_.:-]{1,200}$/;

interface Filters {
  reference?: string;
  status?: string[];
  created_from?: Date;
  created_to?: Date;
}

function clauses(f: Filters): string[] {
  return [
    ...(f.reference !== undefined ? [`ClientReference = '${f.reference}'`] : []),
    ...(f.status ? [`PaymentStatus IN (${quoted(f.status)})`] : []),
    ...(f.created_from ? [`CreatedAt >= '${f.created_from.toISOString()}'`] : []),
    ...(f.created_to ? [`CreatedAt < '${f.created_to.toISOString()}'`] : []),
  ];
}

async function listPage(
  temporal: Client,
  query: string,
  pageSize: number,
  token?: Uint8Array,
): Promise<{ executions: RawExecution[]; next?: Uint8Array }> {
  const page = await temporal.workflowService.listWorkflowExecutions({
    namespace: temporal.options.namespace,
    query,
    pageSize,
    ...(token ? { nextPageToken: token } : {}),
  });
  const next = page.nextPageToken && page.nextPageToken.length > 0 ? page.nextPageToken : undefined;
  return { executions: page.executions ?? [], ...(next ? { next } : {}) };
}

const millis = (t: google.protobuf.ITimestamp | null | undefined): number =>
  t ? Number(t.seconds ?? 0) * 1000 + Math.floor((t.nanos ?? 0) / 1e6) : 0;

/**
 * The closed runs of `executions` that a later run of the same workflow has replaced (a session reopened
 * by a refund or a late event): one visibility call for the whole page.
 */
async function replacedRuns(
  temporal: Client,
  taskQueue: string,
  executions: RawExecution[],
): Promise<Set<string>> {
  const closed = executions.filter(
    (e) =>
      e.status !== Status.WORKFLOW_EXECUTION_STATUS_RUNNING && SAFE_ID.test(e.execution?.workflowId ?? ''),
  );
  const replaced = new Set<string>();
  if (closed.length === 0) return replaced;
  const ids = [...new Set(closed.map((e) => e.execution!.workflowId!))];
  const earliest = Math.min(...closed.map((e) => millis(e.startTime)));
  const query =
    `TaskQueue = '${taskQueue}' AND WorkflowId IN (${quoted(ids)}) AND ` +
    `ExecutionStatus != 'ContinuedAsNew' AND StartTime > '${new Date(earliest).toISOString()}'`;
  const later: RawExecution[] = [];
  let token: Uint8Array | undefined;
  // Runs started after these: normally none; bounded however many reopenings there were.
  for (let pages = 0; pages < 10; pages++) {
    const page = await listPage(temporal, query, 1_000, token);
    later.push(...page.executions);
    if (!page.next) break;
    token = page.next;
  }
  for (const e of closed) {
    const id = e.execution!.workflowId!;
    const started = millis(e.startTime);
    if (
      later.some(
        (l) =>
          l.execution?.workflowId === id &&
          l.execution.runId !== e.execution!.runId &&
          millis(l.startTime) > started,
      )
    )
      replaced.add(e.execution!.runId!);
  }
  return replaced;
}

interface Found {
  executions: RawExecution[];
  hasMore: boolean;
  next?: string;
}

async function search(
  temporal: Client,
  taskQueue: string,
  what: 'sessions' | 'subscriptions',
  base: string,
  f: Filters & { limit: number; cursor?: string },
  digestOf: object,
): Promise<Found> {
  const digest = filterDigest(what, digestOf);
  const token = f.cursor !== undefined ? decodeCursor(f.cursor, digest) : undefined;
  const query = [
    `TaskQueue = '${taskQueue}'`,
    base,
    `ExecutionStatus != 'ContinuedAsNew'`,
    ...clauses(f),
  ].join(' AND ');
  const page = await listPage(temporal, query, f.limit, token);
  const replaced = await replacedRuns(temporal, taskQueue, page.executions);
  const latest = page.executions.filter((e) => !replaced.has(e.execution?.runId ?? ''));
  // The same run twice on one page cannot happen; the same workflow twice would be a replaced run.
  const seen = new Set<string>();
  const executions = latest.filter((e) => {
    const id = e.execution?.workflowId ?? '';
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
  return {
    executions,
    hasMore: page.next !== undefined,
    ...(page.next ? { next: encodeCursor(digest, page.next) } : {}),
  };
}

function attributes(e: RawExecution) {
  const sa = decodeTypedSearchAttributes(e.searchAttributes?.indexedFields);
  const created = sa.get(CreatedAt) ?? new Date(millis(e.startTime));
  const amount = sa.get(AmountMinor);
  const currency = sa.get(CurrencyCode);
  return {
    kind: sa.get(PaymentKind),
    status: sa.get(PaymentStatus),
    reference: sa.get(ClientReference) ?? '',
    createdAt: created.toISOString(),
    ...(amount !== undefined ? { amount } : {}),
    ...(currency ? { currency } : {}),
    needsAttention: sa.get(NeedsAttention) ?? false,
  };
}

const isOneOf = <T extends string>(values: readonly T[], v: string | undefined): v is T =>
  v !== undefined && (values as readonly string[]).includes(v);

/** Payment sessions in the store, newest first, a page at a time. */
export async function searchSessions(store: Store, input: unknown): Promise<SessionPage> {
  const q = parseSearch(sessionSearchInput, input);
  const { limit, cursor, ...filters } = q;
  const digest = filterDigest('sessions', filters);
  let after: SessionCursor | undefined;
  if (cursor !== undefined) {
    const [createdAt, id] = (() => {
      try {
        return JSON.parse(decodeCursorText(cursor, digest)) as [string, string];
      } catch (err) {
        if (err instanceof InputValidationError) throw err;
        return [undefined, undefined];
      }
    })();
    if (typeof createdAt !== 'string' || typeof id !== 'string' || Number.isNaN(Date.parse(createdAt)))
      throw new InputValidationError([{ field: 'cursor', rule: 'the next of an earlier page, as it was' }]);
    after = { createdAt: new Date(createdAt), id };
  }
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
  const sessions = page.map((st): SessionSummary => {
    const view = sessionViewOf(st);
    const amount = st.finalizeAmount ?? st.request.money?.amount;
    return {
      sessionId: st.sessionId,
      kind: st.kind,
      reference: st.reference,
      phase: view.phase,
      ...(amount !== undefined ? { amount } : {}),
      ...(st.request.money ? { currency: st.request.money.currency } : {}),
      createdAt: st.createdAt,
      needsAttention: st.attention !== undefined,
    };
  });
  return {
    sessions,
    hasMore,
    ...(hasMore && last ? { next: encodeCursor(digest, JSON.stringify([last.createdAt, last.sessionId])) } : {}),
  };
}

/** Subscriptions of `taskQueue`, the same way. */
export async function searchSubscriptions(
  temporal: Client,
  taskQueue: string,
  input: unknown,
): Promise<SubscriptionPage> {
  const q = parseSearch(subscriptionSearchInput, input);
  const { limit: _limit, cursor: _cursor, ...filters } = q;
  const found = await search(
    temporal,
    taskQueue,
    'subscriptions',
    `PaymentKind = '${SUBSCRIPTION_KIND}'`,
    q,
    filters,
  );
  const subscriptions = found.executions.map((e): SubscriptionSummary => {
    const { kind: _kind, status, ...a } = attributes(e);
    return {
      subscriptionId: e.execution?.workflowId ?? '',
      status: isOneOf(SUBSCRIPTION_STATUSES, status) ? status : 'active',
      ...a,
    };
  });
  return { subscriptions, hasMore: found.hasMore, ...(found.next ? { next: found.next } : {}) };
}
