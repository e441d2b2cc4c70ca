/**
 * `paysaga events tail`: follows events in a terminal through the HTTP API (like `stripe listen`
 * prints them): one line per event, `<created>  <type>  <subject>  <id>`, until Ctrl-C. It pages
 * forward through the store's global order of events (`after` = the last event id printed).
 */
import { InvalidArgumentError, type Command } from 'commander';
import { PaysagaApiError, type EventListQuery } from '../../client/http';
import { EVENT_TYPES, type EventType, type PaysagaEvent } from '../../common/events';
import { apiClientFor } from '../api-access';

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
  const subject = opts.session ?? opts.subscription;
  const filter: EventListQuery = {
    ...(opts.session ? { session_id: opts.session } : {}),
    ...(opts.subscription ? { subscription_id: opts.subscription } : {}),
    ...(opts.type ? { type: opts.type } : {}),
    limit: 200,
  };
  // The store gives every event a place in one global order, committed in that order (an event's
  // place is taken in the transaction that inserts it): paging on from the last event printed misses
  // none and repeats none, across subjects too.
  let cursor: string = opts.since ?? new Date().toISOString();
  let failing = false;
  deps.err(`following events at ${apiUrl}${subject ? ` for ${subject}` : ''} (Ctrl-C stops)`);
  try {
    while (!deps.signal?.aborted) {
      try {
        for (;;) {
          const page = await api.events.list({ ...filter, after: cursor });
          for (const e of page.events) deps.out(opts.json ? JSON.stringify(e) : formatEventLine(e));
          if (page.next) cursor = page.next;
          if (!page.hasMore || deps.signal?.aborted) break;
        }
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
