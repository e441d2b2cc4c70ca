import { z } from 'zod';
import { ERROR_HTTP_STATUS, type RequestErrorCode } from './errors';
import type { DeliveryLog } from './delivery-record';

/*
 * Fault injection rules of the sandbox: what can go wrong between the partner and the provider,
 * on purpose, so reliability tests can prove the partner side survives it.
 *
 * One FaultInjector per sandbox holds the current rules. The fastify plugin in routes/faults.ts asks it
 * about every /api/v1 request; the WebhookDispatcher asks it about every event it is about to send.
 *
 * Determinism: `rate` is applied with a counter, not a random number. A rule with rate r fires on
 * the n-th matching call (n = 1, 2, ...) when floor(n*r) > floor((n-1)*r): exactly the share r of
 * matching calls, evenly spread (rate 0.5 fires on the 2nd, 4th, 6th ...; rate 1 on every call).
 * Tests therefore know which call fails without seeding anything.
 */

/** Longest time window of a rule: a day (real ms). */
export const MAX_RULE_WINDOW_MS = 24 * 3_600_000;
/** Most rules held at once (each POST holds at most 100; /sandbox/faults/add appends to them). */
export const MAX_RULES_HELD = 1_000;

/** Limits shared by every rule. */
const ruleLimits = {
  /** how many times the rule fires before it is spent; absent = unlimited */
  times: z.number().int().positive().optional(),
  /** share of matching calls the rule fires on, 0..1 */
  rate: z.number().min(0).max(1).default(1),
  /** the rule acts only this long (real ms) after it was set, then it is spent; absent = until replaced */
  forMs: z.number().int().positive().max(MAX_RULE_WINDOW_MS).optional(),
  /** a name for the rule in GET /sandbox/faults (a test's fault window, say); no effect */
  label: z.string().min(1).max(120).optional(),
};

/** A request path as written in the spec's endpoint table, without /api/v1/, e.g. `transaction/start/checkout`; a trailing `*` matches a prefix. */
const pathFilter = z
  .string()
  .min(1)
  .regex(
    /^[a-z0-9_/]+\*?$/,
    'must look like transaction/start/checkout (letters, digits, _ and /, optional trailing *)',
  )
  .transform((p) => p.replace(/^\/+/, ''))
  .optional();

const eventTypeFilter = z.string().min(1).optional();

const latencyRule = z
  .object({
    kind: z.literal('latency'),
    ms: z.number().int().min(0).max(120_000),
    path: pathFilter,
    ...ruleLimits,
  })
  .strict();
const error5xxRule = z
  .object({
    kind: z.literal('error_5xx'),
    status: z.union([z.literal(500), z.literal(502), z.literal(503)]).default(503),
    path: pathFilter,
    ...ruleLimits,
  })
  .strict();
const refuseRule = z
  .object({
    kind: z.literal('refuse'),
    /** the provider's error code; the HTTP status is the sandbox's for that code (README, "Choices") */
    errorCode: z
      .enum(Object.keys(ERROR_HTTP_STATUS) as [RequestErrorCode, ...RequestErrorCode[]])
      .default('invalid_request'),
    /** the error description, `field.rule` as the provider writes it */
    description: z.string().min(1).max(200).default('sandbox_fault.refused'),
    path: pathFilter,
    ...ruleLimits,
  })
  .strict();
const overcaptureRule = z.object({ kind: z.literal('overcapture'), ...ruleLimits }).strict();
const dropAfterCommitRule = z
  .object({ kind: z.literal('drop_after_commit'), path: pathFilter, ...ruleLimits })
  .strict();

const webhookDropRule = z
  .object({ kind: z.literal('webhook_drop'), eventType: eventTypeFilter, ...ruleLimits })
  .strict();
const webhookDuplicateRule = z
  .object({ kind: z.literal('webhook_duplicate'), eventType: eventTypeFilter, ...ruleLimits })
  .strict();
const webhookReorderRule = z
  .object({
    kind: z.literal('webhook_reorder'),
    eventType: eventTypeFilter,
    /** longest the event is held when no later event of its session comes (real ms, not scaled); default 30 min × timeScale */
    maxHoldMs: z.number().int().positive().max(3_600_000).optional(),
    ...ruleLimits,
  })
  .strict();
const webhookDelayRule = z
  .object({
    kind: z.literal('webhook_delay'),
    ms: z.number().int().min(0).max(3_600_000),
    eventType: eventTypeFilter,
    ...ruleLimits,
  })
  .strict();

export const faultRuleSchema = z.discriminatedUnion('kind', [
  latencyRule,
  error5xxRule,
  refuseRule,
  overcaptureRule,
  dropAfterCommitRule,
  webhookDropRule,
  webhookDuplicateRule,
  webhookReorderRule,
  webhookDelayRule,
]);

/** Body of POST /sandbox/faults and the `faults` field of the sandbox config. */
export const faultRulesSchema = z.array(faultRuleSchema).max(100);
export const faultRulesBodySchema = z.object({ rules: faultRulesSchema }).strict();

/** A rule as written by the user (defaults not yet applied). */
export type FaultRuleInput = z.input<typeof faultRuleSchema>;
/** A validated rule, defaults applied. */
export type FaultRule = z.output<typeof faultRuleSchema>;
export type FaultKind = FaultRule['kind'];

/**
 * A rule as shown by GET /sandbox/faults: the rule plus how often it matched and fired; a rule with
 * `forMs` also shows when it was set, when its window ends and whether it has.
 */
export type FaultRuleView = FaultRule & {
  remaining: number | null;
  matched: number;
  fired: number;
  setAt?: string;
  expiresAt?: string;
  expired?: boolean;
};

/** What to do with one /api/v1 request. */
export interface RequestFaultDecision {
  latencyMs: number;
  /** answer this status without processing the request */
  errorStatus?: 500 | 502 | 503;
  /** answer this provider error without processing the request */
  refusal?: { errorCode: RequestErrorCode; description: string; httpStatus: number };
  /** process the request, then close the connection instead of answering */
  dropAfterCommit: boolean;
}

/** What to do with one webhook event (decided once per event, not per attempt). */
export interface WebhookFaultDecision {
  drop: boolean;
  duplicate: boolean;
  /** hold the event until the next event of its session has been sent; value = longest hold in real ms, or null for the default */
  reorder: { maxHoldMs: number | null } | false;
  delayMs: number;
}

interface RuleState {
  rule: FaultRule;
  matched: number;
  fired: number;
  /** When the rule was set (epoch ms): its `forMs` window counts from here. */
  setAt: number;
}

export class FaultRulesError extends Error {
  override name = 'FaultRulesError';
  constructor(
    message: string,
    readonly zodError: z.ZodError,
  ) {
    super(message);
  }
}

export class FaultInjector {
  private rules: RuleState[] = [];
  private log: DeliveryLog | null = null;

  /**
   * `rules` may come unchecked from the config file's `faults` field; invalid ones throw FaultRulesError.
   * `now` is the clock of `forMs` windows (tests pass their own).
   */
  constructor(
    rules: readonly FaultRuleInput[] | readonly unknown[] = [],
    private readonly now: () => number = Date.now,
  ) {
    this.setRules(rules);
  }

  /** Replaces every rule (counters start over). Throws FaultRulesError, naming the field, on invalid rules. */
  setRules(rules: readonly FaultRuleInput[] | readonly unknown[]): void {
    this.rules = this.parse(rules);
  }

  /**
   * Adds rules after the current ones, whose counters and windows go on: faults that start and end at
   * different times (each with its `forMs`) without one replacing the other. At most MAX_RULES_HELD
   * rules are held (FaultRulesError beyond, nothing added).
   */
  addRules(rules: readonly FaultRuleInput[] | readonly unknown[]): void {
    const added = this.parse(rules);
    if (this.rules.length + added.length > MAX_RULES_HELD) {
      const issue: z.core.$ZodIssue = {
        code: 'too_big',
        origin: 'array',
        maximum: MAX_RULES_HELD - this.rules.length,
        inclusive: true,
        path: [],
        message: `at most ${MAX_RULES_HELD} rules are held; ${this.rules.length} are`,
        input: rules,
      };
      throw new FaultRulesError(`invalid fault rules: ${issue.message}`, new z.ZodError([issue]));
    }
    this.rules.push(...added);
  }

  private parse(rules: readonly FaultRuleInput[] | readonly unknown[]): RuleState[] {
    const parsed = faultRulesSchema.safeParse(rules);
    if (!parsed.success) {
      const lines = parsed.error.issues.map((i) => `faults.${i.path.join('.')}: ${i.message}`);
      throw new FaultRulesError(`invalid fault rules: ${lines.join('; ')}`, parsed.error);
    }
    const setAt = this.now();
    return parsed.data.map((rule) => ({ rule, matched: 0, fired: 0, setAt }));
  }

  clear(): void {
    this.rules = [];
  }

  /**
   * The WebhookDispatcher built with this injector registers its delivery log here, so the fastify
   * plugin, which is given only `{ faults }`, can serve GET /sandbox/webhooks.
   */
  attachDeliveryLog(log: DeliveryLog): void {
    this.log = log;
  }

  deliveryLog(): DeliveryLog | null {
    return this.log;
  }

  list(): FaultRuleView[] {
    const now = this.now();
    return this.rules.map(({ rule, matched, fired, setAt }) => ({
      ...rule,
      remaining: rule.times === undefined ? null : rule.times - fired,
      matched,
      fired,
      ...(rule.forMs === undefined
        ? {}
        : {
            setAt: new Date(setAt).toISOString(),
            expiresAt: new Date(setAt + rule.forMs).toISOString(),
            expired: now >= setAt + rule.forMs,
          }),
    }));
  }

  /**
   * Decides the faults of one /api/v1 request. `path` is the URL path with or without the /api/v1/
   * prefix and query. Latency applies on its own; a 5xx, then a refusal, wins over drop_after_commit (a
   * request that is not processed cannot be committed), and then the later rules are not even
   * consulted, so their counters only move for requests that reach them.
   */
  decideRequest(path: string): RequestFaultDecision {
    const endpoint = normalizePath(path);
    const decision: RequestFaultDecision = { latencyMs: 0, dropAfterCommit: false };
    const latency = this.fire('latency', (r) => pathMatches(r.path, endpoint));
    if (latency) decision.latencyMs = latency.ms;
    const error = this.fire('error_5xx', (r) => pathMatches(r.path, endpoint));
    if (error) {
      decision.errorStatus = error.status;
      return decision;
    }
    const refuse = this.fire('refuse', (r) => pathMatches(r.path, endpoint));
    if (refuse) {
      decision.refusal = {
        errorCode: refuse.errorCode,
        description: refuse.description,
        httpStatus: ERROR_HTTP_STATUS[refuse.errorCode],
      };
      return decision;
    }
    decision.dropAfterCommit =
      this.fire('drop_after_commit', (r) => pathMatches(r.path, endpoint)) !== undefined;
    return decision;
  }

  /**
   * Whether this transaction/finalize charges the whole hold, whatever amount it was asked for (a
   * provider bug the partner must notice: an over-capture). Asked by the finalize handler once the
   * request is valid, so refused requests move no counter.
   */
  overcapture(): boolean {
    return this.fire('overcapture', () => true) !== undefined;
  }

  /** Decides the faults of one webhook event. A dropped event consults no other rule. */
  decideWebhook(eventType: string): WebhookFaultDecision {
    const matches = (r: { eventType?: string | undefined }) =>
      r.eventType === undefined || r.eventType === eventType;
    const none: WebhookFaultDecision = { drop: false, duplicate: false, reorder: false, delayMs: 0 };
    if (this.fire('webhook_drop', matches)) return { ...none, drop: true };
    const delay = this.fire('webhook_delay', matches);
    const reorder = this.fire('webhook_reorder', matches);
    return {
      drop: false,
      duplicate: this.fire('webhook_duplicate', matches) !== undefined,
      reorder: reorder ? { maxHoldMs: reorder.maxHoldMs ?? null } : false,
      delayMs: delay ? delay.ms : 0,
    };
  }

  /** The first rule of `kind` that matches and fires now, with its counters advanced; rules are tried in order. */
  private fire<K extends FaultKind>(
    kind: K,
    matches: (rule: Extract<FaultRule, { kind: K }>) => boolean,
  ): Extract<FaultRule, { kind: K }> | undefined {
    const now = this.now();
    for (const state of this.rules) {
      const rule = state.rule;
      if (rule.kind !== kind) continue;
      const typed = rule as Extract<FaultRule, { kind: K }>;
      if (!matches(typed)) continue;
      if (rule.times !== undefined && state.fired >= rule.times) continue; // spent
      if (rule.forMs !== undefined && now >= state.setAt + rule.forMs) continue; // its window is over
      state.matched += 1;
      if (Math.floor(state.matched * rule.rate) > Math.floor((state.matched - 1) * rule.rate)) {
        state.fired += 1;
        return typed;
      }
    }
    return undefined;
  }
}

function normalizePath(path: string): string {
  const noQuery = path.split('?', 1)[0] ?? '';
  return noQuery
    .replace(/^\/+/, '')
    .replace(/^api\/v1\//, '')
    .replace(/\/+$/, '');
}

function pathMatches(filter: string | undefined, endpoint: string): boolean {
  if (filter === undefined) return true;
  return filter.endsWith('*') ? endpoint.startsWith(filter.slice(0, -1)) : endpoint === filter;
}
