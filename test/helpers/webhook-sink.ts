import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A partner webhook endpoint for tests: an HTTP server on 127.0.0.1 that records every request
 * (raw body bytes, headers, parsed JSON) and answers with a status the test chooses.
 */
export interface ReceivedWebhook {
  at: number;
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: Buffer;
  /** parsed JSON, or undefined when the body was not JSON */
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export interface WebhookSink {
  url: string;
  received: ReceivedWebhook[];
  /** status for the n-th request (1-based); default 200 */
  respondWith(status: number | ((n: number, hook: ReceivedWebhook) => number)): void;
  /** resolves with the first received webhook (past or future) that matches */
  waitFor(predicate: (hook: ReceivedWebhook) => boolean, timeoutMs?: number): Promise<ReceivedWebhook>;
  /** received webhooks of one session, in arrival order */
  ofSession(sessionId: string): ReceivedWebhook[];
  close(): Promise<void>;
}

export async function startWebhookSink(): Promise<WebhookSink> {
  const received: ReceivedWebhook[] = [];
  const waiters = new Set<{
    predicate: (h: ReceivedWebhook) => boolean;
    resolve: (h: ReceivedWebhook) => void;
  }>();
  let status: number | ((n: number, hook: ReceivedWebhook) => number) = 200;

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks);
      let body: unknown;
      try {
        body = JSON.parse(rawBody.toString('utf8'));
      } catch {
        body = undefined;
      }
      const hook: ReceivedWebhook = {
        at: Date.now(),
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        rawBody,
        body,
      };
      received.push(hook);
      const code = typeof status === 'function' ? status(received.length, hook) : status;
      res.writeHead(code, { 'content-type': 'text/plain' }).end(code < 300 ? 'ok' : 'no');
      for (const w of waiters) {
        if (w.predicate(hook)) {
          waiters.delete(w);
          w.resolve(hook);
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    received,
    respondWith(s) {
      status = s;
    },
    waitFor(predicate, timeoutMs = 10_000) {
      const past = received.find(predicate);
      if (past) return Promise.resolve(past);
      return new Promise((resolve, reject) => {
        const w = {
          predicate,
          resolve: (h: ReceivedWebhook) => {
            clearTimeout(timer);
            resolve(h);
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(w);
          reject(
            new Error(
              `no matching webhook within ${timeoutMs} ms (received ${received.length}: ${received.map((h) => h.body?.type).join(', ')})`,
            ),
          );
        }, timeoutMs);
        waiters.add(w);
      });
    },
    ofSession(sessionId) {
      return received.filter((h) => h.body?.session_info?.id === sessionId);
    },
    close() {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
