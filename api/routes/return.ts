/**
 * Where the payer lands after 3-D Secure or the bank app (the back_url), by GET or by POST (issuers
 * post forms; some post JSON). It asks the workflow to check the state now, waits briefly for the
 * outcome, then shows a small page or sends the payer on to the partner's page. Not bearer-protected:
 * a browser comes here. The page shows the session id and the outcome, never card data; what the
 * issuer posted is not needed and is neither read nor logged.
 */
import formbody from '@fastify/formbody';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { SessionNotFoundError } from '../../client/errors';
import type { PaymentsClient } from '../../client/payments-client';
import type { SessionView } from '../../common/views';
import type { ApiDeps } from '../deps';

const SESSION_ID = /^[A-Za-z0-9_.:-]{1,128}$/;
const SETTLED = new Set(['succeeded', 'failed', 'canceled', 'awaiting_approval', 'awaiting_finalization']);
const DEFAULT_RETURN_WAIT_MS = 3_000;

type Outcome = 'success' | 'failed' | 'processing';

export function outcomeOf(view: SessionView): Outcome {
  if (view.phase === 'succeeded') return 'success';
  if (view.phase === 'failed' || view.phase === 'canceled') return 'failed';
  return 'processing';
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Until the payer's part is over or `ms` passed. awaitProgress answers at once while the session
 * still shows the payer's action (the state check is on its way), so that phase is re-read.
 */
async function settle(payments: PaymentsClient, id: string, ms: number): Promise<SessionView> {
  const deadline = Date.now() + ms;
  let view = await payments.sessions.get(id);
  while (!SETTLED.has(view.phase) && Date.now() < deadline) {
    const left = deadline - Date.now();
    if (view.phase === 'awaiting_payer') {
      await sleep(Math.min(200, left));
      view = await payments.sessions.get(id);
    } else {
      view = await payments.sessions.waitForChange(id, { timeoutMs: left, until: 'progress' });
    }
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

export function resultPage(kind: keyof typeof TEXT, sessionId?: string): string {
  const [title, text] = TEXT[kind];
  // The refresh is a GET: after a POST to the bare /return it must still name the session.
  const target = sessionId ? `; url=/return/${encodeURIComponent(sessionId)}` : '';
  const refresh =
    kind === 'processing' || kind === 'unavailable'
      ? `<meta http-equiv="refresh" content="5${escape(target)}">`
      : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
${refresh}<title>${title}</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#222}
h1{font-size:1.5rem}.success{color:#11772d}.failed,.not_found{color:#a61b1b}.processing,.unavailable{color:#8a5a00}
code{background:#f2f2f2;padding:.1rem .3rem}</style></head>
<body><h1 class="${kind}" data-outcome="${kind}">${title}</h1><p>${text}</p>
${sessionId ? `<p>Session <code id="session-id">${escape(sessionId)}</code></p>` : ''}
</body></html>
`;
}

/**
 * The session id from the path, else from `session_id` in the query or the posted fields (the
 * back_url is fixed at initiate, before the session id exists, so a partner may register the bare
 * `/return` and rely on the provider's return parameters).
 */
function sessionIdOf(request: FastifyRequest): string {
  const fromPath = (request.params as { sessionId?: unknown } | undefined)?.sessionId;
  const fromQuery = (request.query as { session_id?: unknown } | undefined)?.session_id;
  const body = request.body as { session_id?: unknown } | undefined;
  const fromBody = body && typeof body === 'object' ? body.session_id : undefined;
  const id = [fromPath, fromQuery, fromBody].find((v) => typeof v === 'string' && v !== '');
  return typeof id === 'string' ? id : '';
}

export const returnRoutes: FastifyPluginAsync<ApiDeps> = async (app, deps) => {
  // Issuers post forms (formbody); JSON is read leniently; anything else is read and dropped. The
  // payer never gets a 415 or a JSON syntax error: a person is looking at this page.
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

  const page = (reply: FastifyReply, status: number, kind: keyof typeof TEXT, id?: string) =>
    reply
      .code(status)
      .header('cache-control', 'no-store')
      .type('text/html; charset=utf-8')
      .send(resultPage(kind, id));

  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const id = sessionIdOf(request);
    if (!SESSION_ID.test(id)) return page(reply, 404, 'not_found');
    let view: SessionView;
    try {
      await deps.payments.sessions.notifyPayerReturned(id);
      view = await settle(deps.payments, id, deps.returnWaitMs ?? DEFAULT_RETURN_WAIT_MS);
    } catch (err) {
      if (err instanceof SessionNotFoundError) return page(reply, 404, 'not_found', id);
      // The payer is not the one to show a JSON error to; the session goes on regardless.
      reply.log.error({ err, sessionId: id }, 'payer return: state check failed');
      return page(reply, 503, 'unavailable', id);
    }
    reply.log.info({ sessionId: id, phase: view.phase }, 'payer returned');
    if (deps.returnUrl) {
      const target = new URL(deps.returnUrl);
      target.searchParams.set('session_id', id);
      return reply.header('cache-control', 'no-store').redirect(target.toString(), 303);
    }
    return page(reply, 200, outcomeOf(view), id);
  };

  const schema = (method: string, withId: boolean) => ({
    tags: ['payer'],
    summary: `Payer return (${method})${withId ? '' : ', session_id in the query or the posted fields'}`,
    description:
      'The back_url of 3-D Secure and FPS. Triggers an immediate state check and shows a result page ' +
      '(or 303 to PAYSAGA_RETURN_URL?session_id=). Unknown session: 404 page.',
    ...(withId
      ? { params: { type: 'object', properties: { sessionId: { type: 'string' } } } }
      : { querystring: { type: 'object', properties: { session_id: { type: 'string' } } } }),
  });
  app.get('/return/:sessionId', { schema: schema('GET', true) }, handler);
  app.post('/return/:sessionId', { schema: schema('POST', true) }, handler);
  app.get('/return', { schema: schema('GET', false) }, handler);
  app.post('/return', { schema: schema('POST', false) }, handler);
};
