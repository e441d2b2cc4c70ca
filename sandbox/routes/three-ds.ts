import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { completeChallenge } from '../engine/checkout';
import type { FlowContext } from '../engine/context';
import { ApiError } from '../errors';
import { autoPostPage, escapeHtml, hiddenFields, page } from './html';
import { bodyOf } from './sandbox-common';
import { threeDsBody } from './sandbox-schemas';

/**
 * The issuer's 3-D Secure page at user_action.destination_info.url_address. The payer arrives by the
 * given method (POST with PaReq/MD, or GET), enters a code (12345 passes), and is sent back to back_url
 * by the project's returnMethod: a 303 redirect to back_url as given (GET) or an auto-submitted form
 * with the issuer's MD and PaRes (POST). Nothing names the session unless the project asks for
 * returnParams: the spec promises only the return to back_url.
 */
export const threeDsRoutes: FastifyPluginAsync<{ ctx: FlowContext }> = async (app, { ctx }) => {
  const challengePage = async (req: { params: { id: string } }, reply: FastifyReply) => {
    const paymentId = ctx.state.challenges.get(req.params.id);
    const found = paymentId === undefined ? undefined : ctx.state.payment(paymentId);
    if (!found)
      return reply
        .code(404)
        .type('text/html')
        .send(page('3-D Secure', '<p>This authentication is no longer open.</p>'));
    const p = found.payment;
    const body =
      `<p>Payment ${escapeHtml(p.id)}: ${p.sum.sum} (minor units, ${escapeHtml(p.sum.currency_code)})</p>` +
      `<form method="POST" action="/sandbox/3ds/${escapeHtml(req.params.id)}/complete">` +
      hiddenFields({ MD: req.params.id }) +
      '<label>Code from SMS <input name="code" autocomplete="one-time-code" autofocus></label>' +
      '<button type="submit">Confirm</button></form><p class="note">Sandbox: 12345 succeeds, anything else fails.</p>';
    return reply.type('text/html').send(page('3-D Secure', body));
  };
  app.get<{ Params: { id: string } }>('/:id', challengePage);
  app.post<{ Params: { id: string } }>('/:id', challengePage);

  app.post<{ Params: { id: string } }>('/:id/complete', async (req, reply) => {
    const { code } = bodyOf(req, threeDsBody);
    let outcome;
    try {
      outcome = completeChallenge(ctx, req.params.id, code);
    } catch (err) {
      if (err instanceof ApiError)
        return reply
          .code(404)
          .type('text/html')
          .send(page('3-D Secure', '<p>This authentication is no longer open.</p>'));
      throw err;
    }
    const { session, payment, passed } = outcome;
    const backUrl = payment.echo.payment_settings?.back_url;
    const result = passed ? 'authenticated' : 'failed';
    if (typeof backUrl !== 'string') {
      return reply
        .type('text/html')
        .send(page('3-D Secure', `<p>Authentication ${result}. You can close this window.</p>`));
    }
    const project = ctx.project(session.projectId);
    const named: Record<string, string> = project.returnParams
      ? { session_id: session.id, payment_id: payment.id }
      : {};
    if (project.returnMethod === 'GET') {
      const url = new URL(backUrl);
      for (const [k, v] of Object.entries(named)) url.searchParams.set(k, v);
      return reply.redirect(url.toString(), 303);
    }
    const fields: Record<string, string> = {
      ...named,
      MD: req.params.id,
      PaRes: Buffer.from(JSON.stringify({ payment_id: payment.id, result })).toString('base64'),
    };
    return reply.type('text/html').send(autoPostPage('Returning to the shop', backUrl, fields));
  });
};
