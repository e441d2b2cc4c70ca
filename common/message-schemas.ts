/**
 * The shape of every message paysaga's workflows accept, checked inside the workflow before anything
 * reads it (docs/decisions/016-results-are-proven.md). Anyone who can reach the namespace can send a signal
 * or an Update: a payload that does not parse is refused (a signal: recorded as refused; an Update: rejected
 * by its validator, nothing in history) and never fails a workflow task. Safe for workflow code (zod only).
 *
 * Each schema is built the first time it is used, once per copy of this module. Building all of them
 * cost a new workflow about 8 ms (zod's objects are costly to make), most of it for schemas that kind
 * never uses; and workers load this module once for all their workflows (`preloadModules`,
 * workers/workflow-bundle-options.ts), so a schema is built once per worker thread. That is safe
 * because a schema is the same whoever built it and nothing here holds a workflow's state. The built
 * schemas sit in closures, not in the exports, because the SDK freezes what a preloaded module exports
 * and zod completes its objects on first use.
 */
import { z } from 'zod';
import { invalidArgument } from './failures';
import { END_REASON_CODES } from './reasons';

/** A message's schema, built on first use (see the file comment). */
export type MessageSchema<T> = () => z.ZodType<T>;

// zod completes its global settings (the default locale and memoizer) when it makes its first object
// schema: done here, at load, so that a preloaded copy has them before the SDK freezes it.
z.object({ warm: z.string() });

function lazily<S extends z.ZodType>(build: () => S): () => S {
  let built: S | undefined;
  return () => (built ??= build());
}

const text = (max: number) => z.string().max(max);

/**
 * What a worker's codec hands the workflow in place of a payload nobody encrypted although codec keys
 * are set (platform/codec.ts): every schema here refuses it, so it is recorded as refused.
 */
export const UNENCRYPTED_MARK = { paysagaRefused: 'unencrypted payload' } as const;

/** Why a marked payload is refused (the audit's detail, an Update's rule). */
export const UNENCRYPTED = 'unencrypted: sent without the codec keys this deployment requires';

const isUnencrypted = (v: unknown): boolean =>
  typeof v === 'object' &&
  v !== null &&
  (v as { paysagaRefused?: unknown }).paysagaRefused === UNENCRYPTED_MARK.paysagaRefused;

/** The largest webhook body the API takes (api/routes/webhooks.ts); a signed one travels whole. */
export const MAX_WEBHOOK_BODY = 1024 * 1024;

/** A time the store can hold as a timestamp (a forged one must not fail the session's record). */
const isoTime = lazily(() =>
  z.iso.datetime({ offset: true }).refine((v) => /^2\d{3}-/.test(v), 'a time in the years 2000 to 2999'),
);

export const providerEventDelivery = lazily(() =>
  z.object({
    receivedAt: isoTime(),
    via: z.enum(['webhook', 'replay', 'sync']),
    signed: z.object({ body: text(MAX_WEBHOOK_BODY), signature: z.string().min(1).max(2048) }).optional(),
    // Only read for the audit and to decide whether to look: never applied.
    event: z
      .looseObject({
        type: text(200).optional(),
        session_info: z.looseObject({ id: text(200).optional(), updated_at: text(64).optional() }).optional(),
      })
      .optional(),
  }),
);

/** What the starter reports of its start call: a snapshot of this session, or the provider's refusal. */
const startSnapshot = lazily(() => z.looseObject({ id: text(200), updated_at: text(64).optional() }));
const refusal = lazily(() => z.looseObject({ errorCode: text(200), description: text(2000) }));
export const startReport = lazily(() =>
  z.union([z.object({ snapshot: startSnapshot() }), z.object({ refused: refusal() })]),
);

export const cancelRequest = lazily(() => z.object({ reason: text(500).optional() }));
/** A session's decisions may name the payout they are for (a session of several payouts). */
const payoutNamed = () => ({ payout: text(64).optional() });
export const approveRequest = lazily(() => z.object(payoutNamed()).optional());
export const sessionCancelRequest = lazily(() => cancelRequest().extend(payoutNamed()));
/** Finalize and refund check their fields themselves (with the session's rules): an object is enough here. */
export const finalizeRequest = lazily(() => z.looseObject({ amount: z.unknown().optional() }));
export const refundRequest = lazily(() =>
  z.looseObject({
    reference: z.unknown(),
    amount: z.unknown().optional(),
    extraInfo: z.unknown().optional(),
  }),
);

/**
 * A payout added to a session (the client builds the body from a validated input): a reference, the
 * money and a start/transfer body that sends it (a token or an FPS account, never card data).
 */
export const payoutRequest = lazily(() =>
  z.object({
    reference: z.string().regex(/^[A-Za-z0-9._:-]{4,64}$/, '4 to 64 letters, digits or . _ : -'),
    money: z.object({
      amount: z.number().int().positive(),
      currency: z.string().regex(/^[a-z]{3}$/, 'a lower-case ISO 4217 code'),
    }),
    body: z.looseObject({
      payout_info: z.looseObject({ type: z.enum(['card_info', 'recurring_token_info', 'account_info']) }),
      sum_info: z.object({ sum: z.number().int().positive(), currency_code: z.string() }),
    }),
  }),
);

/** A reason as a session sends it (common/reasons.ts). */
const endReason = lazily(() =>
  z.object({
    code: z.enum(END_REASON_CODES),
    detail: text(2000).optional(),
    providerCode: text(200).optional(),
    subject: text(200).optional(),
  }),
);

export const sessionSettled = lazily(() =>
  z.object({
    sessionId: text(200),
    phase: text(64),
    reason: endReason().optional(),
  }),
);

/** The subscription checks the fields itself (checkChange, with its own rules): an object is enough here. */
export const subscriptionChange = lazily(() => z.looseObject({}));
export const resumeRequest = lazily(() => z.object({ restart: z.boolean().optional() }));
export const subscriptionCancelRequest = lazily(() =>
  z.object({ reason: text(500).optional(), atPeriodEnd: z.boolean().optional() }),
);
/** Whether the time is ahead is the subscription's to say (its clock): a time a date holds is enough here. */
export const pauseRequest = lazily(() =>
  z.object({ resumeAt: z.number().int().min(946_684_800_000).max(4_102_444_800_000).optional() }),
);
const periodList = () => z.array(z.number().int().positive()).min(1).max(1_000);
export const collectRequest = lazily(() => z.object({ periods: periodList().optional() }));
export const writeOffRequest = lazily(() =>
  z.object({ periods: periodList().optional(), reason: text(500).optional() }),
);

/** The first problem of a payload that does not parse, as `path: message` (an audit or log line). */
export function whyNot(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid';
  const path = issue.path.length ? issue.path.join('.') : 'payload';
  return `${path}: ${issue.message}`;
}

/** The parsed payload, or why it does not parse. */
export function parseMessage<T>(
  schema: MessageSchema<T>,
  value: unknown,
): { ok: true; value: T } | { ok: false; why: string } {
  if (isUnencrypted(value)) return { ok: false, why: UNENCRYPTED };
  const parsed = schema().safeParse(value);
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false, why: whyNot(parsed.error) };
}

/**
 * An Update's first check (its validator): an argument that does not parse is refused as a 400 naming
 * the field, before the workflow records anything.
 */
export function checkArgument<T>(schema: MessageSchema<T>, value: unknown): T {
  if (isUnencrypted(value)) throw invalidArgument('argument', UNENCRYPTED);
  const parsed = schema().safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw invalidArgument(issue?.path.length ? issue.path.join('.') : 'argument', issue?.message ?? 'invalid');
}
