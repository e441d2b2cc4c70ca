/**
 * An undici dispatcher for PaysagaApiClient that sends each request to the next of several API
 * processes in turn, so one client drives every session through all of them: created by one API, read,
 * finalized or refunded by another. It counts what each API was sent, by route pattern.
 */
import { Agent, type Dispatcher } from 'undici';

export interface AlternatingDispatcher {
  dispatcher: Dispatcher;
  /** origin -> `METHOD /route/{id}` -> requests sent there. */
  sent: Map<string, Map<string, number>>;
  close(): Promise<void>;
}

/** `/v1/sessions/ps_12/finalize?x` -> `/v1/sessions/{id}/finalize`. */
export function routePattern(path: string): string {
  return path.split('?')[0]!.replace(/^(\/v1\/(?:sessions|subscriptions))\/[^/]+/, '$1/{id}');
}

export function alternatingDispatcher(origins: readonly string[]): AlternatingDispatcher {
  const agent = new Agent({ keepAliveTimeout: 10_000, connections: 16 });
  const sent = new Map(origins.map((o) => [new URL(o).origin, new Map<string, number>()]));
  let next = 0;
  const dispatcher = agent.compose((dispatch) => (opts, handler) => {
    const origin = new URL(origins[next++ % origins.length]!).origin;
    const counts = sent.get(origin)!;
    const route = `${opts.method} ${routePattern(opts.path)}`;
    counts.set(route, (counts.get(route) ?? 0) + 1);
    return dispatch({ ...opts, origin }, handler);
  });
  return { dispatcher, sent, close: () => agent.close() };
}
