/**
 * Where the payer lands after 3-D Secure or the bank app: `/return/<session id>?t=<token>`, the back_url
 * paysaga gave the provider for that session (client/return-url.ts), by GET or by POST (issuers post
 * forms; some post JSON). Public and unauthenticated, so (docs/decisions/014-two-listeners.md):
 *
 * - an id that is not a payment session's (`ps_<number>`), or a token that is missing or not this id's
 *   under PAYSAGA_RETURN_SECRETS, is a 404 before anything reaches Temporal;
 * - a valid return asks the workflow for a state check (signal payerReturned) at most once per session
 *   per interval (ReturnChecks; the workflow throttles too), and reads the session by query only: no
 *   Update runs from here; a session whose workflow has closed is shown from the store, and nothing
 *   is started;
 * - the outcome is shown only to the holder of the token (the page's refresh carries it).
 *
 * The page shows the session id and the outcome, never card data; what the issuer posted is not needed
 * and is neither read nor logged.
 */
import formbody from '@fastify/formbody';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { SessionNotFoundError } from '../../client/errors';
import type { PaymentsClient } from '../../client/payments-client';
import { verifyReturnToken } from '../../platform/return-token';
import { SESSION_ID_PATTERN } from '../../common/session-input';
import type { SessionView } from '../../common/views';
import type { ApiDeps } from '../deps';
import { readMalformedContentTypeAsNone } from '../plugins/any-content-type';
import { docSchema, ERROR_REF } from '../schemas';
import { ReturnChecks } from '../return-checks';

const returnParams = z.object({ sessionId: z.string().regex(SESSION_ID_PATTERN) });
const returnQuery = z.object({
  t: z.string().max(128).optional().describe('the return token paysaga minted for this session'),
});
const SETTLED = new Set(['succeeded', 'failed', 'canceled', 'awaiting_approval', 'awaiting_finalization']);
const DEFAULT_RETURN_WAIT_MS = 3_000;
const READ_EVERY_MS = 250;

type Outcome = 'success' | 'failed' | 'processing';

export function outcomeOf(view: SessionView): Outcome {
  if (view.phase === 'succeeded') return 'success';
  if (view.phase === 'failed' || view.phase === 'canceled') return 'failed';
  return 'processing';
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Reads the session (queries only) until the payer's part is over or `ms` passed: the state check the
 * signal asked for is on its way, so a session still awaiting the payer is read again shortly.
 */
async function settle(payments: PaymentsClient, id: string, ms: number): Promise<SessionView> {
  const deadline = Date.now() + ms;
  let view = await payments.sessions.get(id);
  while (!SETTLED.has(view.phase) && Date.now() < deadline) {
    await sleep(Math.min(READ_EVERY_MS, Math.max(0, deadline - Date.now())));
    view = await payments.sessions.get(id);
  }
  return view;
}

const escape = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const TEXT: Record<Outcome | 'not_found' | 'unavailable', [string, string]> = {
  success: ['Payment successful', 'Thank you. Your payment went through.'],
  failed: ['Payment failed', 'The payment did not go through. No money was taken, or it will be returned.'],
  processing: ['Payment is processing', 'We are still waiting for the bank. This page refreshes by itself.'],
  not_found: ['Payment not found', 'We do not know this payment session.'],
  unavailable: ['Please wait', 'We cannot check the payment right now. This page refreshes by itself.'],
};

/** The session a page shows, with the token that lets its refresh see the session again. */
export interface ShownSession {
  sessionId: string;
  token: string;
}

export function resultPage(kind: keyof typeof TEXT, shown?: ShownSession): string {
  const [title, text] = TEXT[kind];
  // The refresh is a GET of this session's signed address, relative so that it also works behind a
  // proxy that serves the API under a path prefix; after a POST it must not post again.
  const target = shown
    ? `; url=${encodeURIComponent(shown.sessionId)}?t=${encodeURIComponent(shown.token)}`
    : '';
  const refresh =
    kind === 'processing' || kind === 'unavailable'
      ? `<meta http-equiv="refresh" content="5${escape(target)}">`
      : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
${refresh}<title>${title}</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#222}
h1{font-size:1.5rem}.success{color:#11772d}.failed,.not_found{color:#a61b1b}.processing,.unavailable{color:#8a5a00}
code{background:#f2f2f2;padding:.1rem .3rem}</style></head>
<body><h1 class="${kind}" data-outcome="${kind}">${title}</h1><p>${text}</p>
${shown ? `<p>Session <code id="session-id">${escape(shown.sessionId)}</code></p>` : ''}
</body></html>
`;
}

type Result = Outcome | 'not_found' | 'unavailable';
/** A check's outcome, and where the partner wants the payer to go next (the session's own back URL). */
interface Checked {
  result: Result;
  backUrl?: string;
}
const checked = (view: SessionView): Checked => ({
  result: outcomeOf(view),
  ...(view.request.backUrl ? { backUrl: view.request.backUrl } : {}),
});

export const returnRoutes: FastifyPluginAsync<ApiDeps> = async (app, deps) => {
  const secrets = (deps.returnSecrets ?? []).filter(Boolean);
  const checks = new ReturnChecks<Checked>(deps.returnCheckIntervalMs);
  const waitMs = deps.returnWaitMs ?? DEFAULT_RETURN_WAIT_MS;

  // Issuers post forms (formbody); JSON is read leniently; anything else is read and dropped. The
  // payer never gets a 415 or a JSON syntax error: a person is looking at this page.
  readMalformedContentTypeAsNone(app);
  app.removeAllContentTypeParsers();
  await app.register(formbody);
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'string', bodyLimit: 64 * 1024 },
    (_request, body, done) => {
      try {
        done(null, JSON.parse(String(body)));
      } catch {
        done(null, undefined);
      }
    },
  );
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: 64 * 1024 }, (_request, _body, done) =>
    done(null, undefined),
  );

  const page = (reply: FastifyReply, status: number, kind: keyof typeof TEXT, shown?: ShownSession) =>
    reply
      .code(status)
      .header('cache-control', 'no-store')
      .header('referrer-policy', 'no-referrer')
      .type('text/html; charset=utf-8')
      .send(resultPage(kind, shown));

  /**
   * The state check (a signal, then queries until the payer's part is over), or with `signal` false a
   * single read. Never an Update.
   */
  const check = async (request: FastifyRequest, id: string, signal: boolean): Promise<Checked> => {
    try {
      if (!signal) return checked(await deps.payments.sessions.get(id));
      try {
        await deps.payments.sessions.notifyPayerReturned(id);
      } catch (err) {
        // No run open: the session's workflow closed (its result came first, or its follow period
        // ended). Its record shows the result; nothing is started for a payer's return.
        if (!(err instanceof SessionNotFoundError)) throw err;
        const view = await deps.payments.sessions.get(id);
        request.log.info({ sessionId: id, phase: view.phase }, 'payer returned after the session closed');
        return checked(view);
      }
      const view = await settle(deps.payments, id, waitMs);
      request.log.info({ sessionId: id, phase: view.phase }, 'payer returned');
      return checked(view);
    } catch (err) {
      if (err instanceof SessionNotFoundError) return { result: 'not_found' };
      // The payer is not the one to show a JSON error to; the session goes on regardless.
      request.log.error({ err, sessionId: id }, 'payer return: the state check failed');
      return { result: 'unavailable' };
    }
  };

  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const id = (request.params as { sessionId?: string }).sessionId ?? '';
    const token = (request.query as { t?: unknown } | undefined)?.t;
    // Before anything reaches Temporal: a forged, unsigned or foreign id learns nothing and costs nothing.
    if (!SESSION_ID_PATTERN.test(id) || !verifyReturnToken(secrets, id, token))
      return page(reply, 404, 'not_found');
    const shown: ShownSession = { sessionId: id, token: token as string };
    const latest = checks.latest(id, () => check(request, id, true));
    let done = await latest.result;
    // Within the interval a final outcome is shown as it is; one that was not final is read again
    // (a query, shared by concurrent requests), but nothing is signaled.
    if (!latest.fresh && (done.result === 'processing' || done.result === 'unavailable'))
      done = await checks.reread(id, () => check(request, id, false));
    const { result } = done;
    if (result === 'not_found') return page(reply, 404, 'not_found');
    if (result === 'unavailable') return page(reply, 503, 'unavailable', shown);
    // The payer goes on to the partner's page: the session's own back URL, else PAYSAGA_RETURN_URL.
    const next = done.backUrl ?? deps.returnUrl;
    if (next) {
      const target = new URL(next);
      target.searchParams.set('session_id', id);
      return reply.header('cache-control', 'no-store').redirect(target.toString(), 303);
    }
    return page(reply, 200, result, shown);
  };

  const schema = (method: string) => ({
    tags: ['payer'],
    summary: `Payer return (${method})`,
    description:
      'The back_url paysaga gives the provider for each session (`<PAYSAGA_PUBLIC_URL>/return/<session id>?t=<token>`). ' +
      'With a valid token: a state check (at most one per session every few seconds), then a result page ' +
      "or 303 to the session's backUrl (else PAYSAGA_RETURN_URL) with ?session_id=. A session whose workflow has closed is shown " +
      'from its record (nothing is started). Unknown id, missing or wrong token: 404 page, nothing ' +
      'else happens.',
    params: docSchema(returnParams),
    querystring: docSchema(returnQuery),
    response: {
      200: { description: 'The result page.', content: { 'text/html': { schema: { type: 'string' } } } },
      303: { description: 'To PAYSAGA_RETURN_URL?session_id=<id>, when set.' },
      400: { description: 'The URL is malformed (bad percent-encoding).', ...ERROR_REF },
      429: { description: 'Too many requests from this address (PAYSAGA_PUBLIC_RATE_LIMIT).', ...ERROR_REF },
      404: {
        description: 'Unknown id, missing or wrong token.',
        content: { 'text/html': { schema: { type: 'string' } } },
      },
      503: {
        description: 'The state could not be checked now; the page says to come back.',
        content: { 'text/html': { schema: { type: 'string' } } },
      },
      ...(method === 'POST'
        ? {
            413: { description: 'The form is larger than 64 KiB (an issuer posts a few KiB).', ...ERROR_REF },
          }
        : {}),
    },
  });
  app.get('/return/:sessionId', { schema: schema('GET') }, handler);
  app.post('/return/:sessionId', { schema: schema('POST') }, handler);
};
