/**
 * `paysaga events tail`: follows events in a terminal through the HTTP API (like `stripe listen`
 * prints them): one line per event, `<created>  <type>  <subject>  <id>`, until Ctrl-C.
 *
 * Following one subject (`--session`, `--subscription`) pages forward by event id. Across subjects
 * there is no global order to page by (each subject's outbox releases on its own), so every poll
 * reads the events created since a little before the previous poll (OVERLAP_MS) and prints those not
 * printed yet: an event published a few seconds late is still shown.
 */
import { InvalidArgumentError, type Command } from 'commander';
import { PaysagaApiError, type EventListQuery } from '../../client/http';
import { EVENT_TYPES, eventSubject, type EventType, type PaysagaEvent } from '../../common/events';
import { apiClientFor } from '../api-access';

const OVERLAP_MS = 60_000;
/** How long an event waits for an earlier one of its subject before it is printed anyway. */
const HOLD_MS = 5_000;
const MAX_REMEMBERED = 20_000;

export interface TailOptions {
  data?: string;
  api?: string;
  token?: string;
  session?: string;
  subscription?: string;
  type?: EventType;
  /** ISO time to start from (default: now). */
  since?: string;
  intervalMs: number;
  json?: boolean;
}

export interface EventsCommandDeps {
  out: (line: string) => void;
  err: (line: string) => void;
  env: NodeJS.ProcessEnv;
  /** Aborted on Ctrl-C (SIGINT) or SIGTERM. */
  signal?: AbortSignal;
}

const processDeps: EventsCommandDeps = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  env: process.env,
};

export function register(program: Command, deps: EventsCommandDeps = processDeps): void {
  const events = program.command('events').description('outbound events (signed notifications to backends)');
  events
    .command('tail')
    .description('follow events through the API: time, type, subject and id of each, until Ctrl-C')
    .option('--session <id>', 'only this session (ps_...)')
    .option('--subscription <id>', 'only this subscription (sub-...)')
    .option('--type <type>', 'only this event type', parseType)
    .option('--since <time>', 'start from this ISO time (default: now)', parseTime)
    .option('--interval <ms>', 'pause between polls', parseInterval, 1_000)
    .option('--json', 'print each event as a JSON line (the whole event)')
    .option('--data <dir>', 'data folder of a running `paysaga dev` (default PAYSAGA_DATA_DIR or .data)')
    .option('--api <url>', 'API base URL (default PAYSAGA_API_URL, else from `paysaga dev`, else :8081)')
    .option('--token <token>', 'API bearer token (default PAYSAGA_API_TOKEN, else <data>/api-token)')
    .action(async (opts: Omit<TailOptions, 'intervalMs'> & { interval: number }) => {
      if (opts.session && opts.subscription) throw new Error('give --session or --subscription, not both');
      const controller = new AbortController();
      const stop = () => controller.abort();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      try {
        await tailEvents({ ...opts, intervalMs: opts.interval }, { ...deps, signal: controller.signal });
      } finally {
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
      }
    });
}

function parseType(value: string): EventType {
  if (!(EVENT_TYPES as readonly string[]).includes(value))
    throw new InvalidArgumentError(`not an event type; one of ${EVENT_TYPES.join(', ')}`);
  return value as EventType;
}

function parseTime(value: string): string {
  const t = Date.parse(value);
  if (Number.isNaN(t)) throw new InvalidArgumentError('an ISO time, e.g. 2025-01-31T12:00:00Z');
  return new Date(t).toISOString();
}

function parseInterval(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 100)
    throw new InvalidArgumentError('a whole number of milliseconds, at least 100');
  return n;
}

/** `<created>  <type>  <subject>  <id>` */
export function formatEventLine(e: PaysagaEvent): string {
  return `${e.created}  ${e.type.padEnd(30)}  ${(e.session_id ?? e.subscription_id ?? '').padEnd(28)}  ${e.id}`;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

/** Polls until `deps.signal` is aborted; resolves then. A wrong token or a bad filter ends it with an error. */
export async function tailEvents(opts: TailOptions, deps: EventsCommandDeps = processDeps): Promise<void> {
  const { api, apiUrl } = apiClientFor(opts, deps.env, { maxRetries: 0, timeoutMs: 30_000 });
  const since = opts.since ?? new Date().toISOString();
  const subject = opts.session ?? opts.subscription;
  const filter: EventListQuery = {
    ...(opts.session ? { session_id: opts.session } : {}),
    ...(opts.subscription ? { subscription_id: opts.subscription } : {}),
    ...(opts.type ? { type: opts.type } : {}),
    limit: 200,
  };
  const printed = new Set<string>();
  let cursor: string = since; // one subject: the last event id printed; across subjects: a time
  let failing = false;
  // Listings are eventually consistent: an event may show up a poll after a later one of its subject.
  // Each subject is printed in sequence order; an event waits (at most HOLD_MS) for the ones before it.
  const lastSequence = new Map<string, number>();
  const held = new Map<string, { event: PaysagaEvent; heldAt: number }>();
  const print = (e: PaysagaEvent) => {
    printed.add(e.id);
    if (printed.size > MAX_REMEMBERED) printed.delete(printed.values().next().value!);
    lastSequence.set(eventSubject(e), e.sequence);
    deps.out(opts.json ? JSON.stringify(e) : formatEventLine(e));
  };
  const show = (e: PaysagaEvent) => {
    if (printed.has(e.id) || held.has(e.id) || e.created <= since) return;
    held.set(e.id, { event: e, heldAt: Date.now() });
  };
  const release = () => {
    const waiting = [...held.values()].sort((a, b) => a.event.sequence - b.event.sequence);
    for (const { event, heldAt } of waiting) {
      const last = lastSequence.get(eventSubject(event));
      const next = last === undefined ? event.sequence === 1 : event.sequence === last + 1;
      if (!next && Date.now() - heldAt < HOLD_MS) continue;
      held.delete(event.id);
      if (last === undefined || event.sequence > last) print(event);
    }
  };

  deps.err(`following events at ${apiUrl}${subject ? ` for ${subject}` : ''} (Ctrl-C stops)`);
  try {
    while (!deps.signal?.aborted) {
      const pollStarted = Date.now();
      try {
        let after = cursor;
        for (;;) {
          const page = await api.events.list({ ...filter, after });
          for (const e of page.events) show(e);
          release();
          if (page.next) after = page.next;
          if (!page.hasMore || deps.signal?.aborted) break;
        }
        cursor = subject
          ? after
          : new Date(Math.max(Date.parse(since), pollStarted - OVERLAP_MS)).toISOString();
        if (failing) deps.err('the API answers again');
        failing = false;
      } catch (err) {
        if (err instanceof PaysagaApiError && (err.status === 400 || err.status === 401)) throw err;
        if (!failing) deps.err(`cannot list events (${(err as Error).message}); trying again`);
        failing = true;
      }
      await sleep(opts.intervalMs, deps.signal);
    }
  } finally {
    await api.close();
  }
}
