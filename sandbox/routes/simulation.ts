import type { FastifyPluginAsync } from 'fastify';
import { chargeback } from '../engine/moneyback';
import { payQr } from '../engine/checkout';
import type { FlowContext } from '../engine/context';
import { ApiError } from '../errors';
import { Ledger } from '../ledger';
import { escapeHtml, page } from './html';
import { bodyOf, fieldsOf, isFormPost, useEnvelopeErrors } from './sandbox-common';
import { chargebackBody, fpsPayBody, ledgerQuery } from './sandbox-schemas';

/**
 * What the payer, the payer's bank and the operator do in the sandbox, and what tests read back:
 * FPS payment by the payer, chargebacks, the ledger, emitted events, counters, health. Not signed.
 */
export const simulationRoutes: FastifyPluginAsync<{ ctx: FlowContext }> = async (app, { ctx }) => {
  useEnvelopeErrors(app);

  app.get('/health', async () => ({
    status: 'ok',
    projects: [...ctx.config.projects.keys()],
    timeScale: ctx.config.timeScale,
    uptime_s: Math.round(process.uptime()),
  }));

  app.get('/ledger', async (req) => {
    const q = fieldsOf(req.query, ledgerQuery);
    const entries = ctx.state.ledger.list({
      ...(q.session_id ? { sessionId: q.session_id } : {}),
      ...(q.project_id ? { projectId: q.project_id } : {}),
    });
    return { status: 'ok', entries, totals: Ledger.totals(entries) };
  });

  app.get('/requests', async (req) => {
    const sessionId = (req.query as Record<string, unknown>).session_id;
    return {
      status: 'ok',
      requests: ctx.state.requests.list(typeof sessionId === 'string' ? sessionId : undefined),
    };
  });

  app.get('/stats', async () => ({ status: 'ok', stats: ctx.state.stats(), next_ids: ctx.state.ids.peek() }));

  app.get('/events', async (req) => {
    const sessionId = (req.query as Record<string, unknown>).session_id;
    const events =
      typeof sessionId === 'string'
        ? ctx.state.events.filter((e) => e.sessionId === sessionId)
        : ctx.state.events;
    return { status: 'ok', events: events.map((e) => ({ ...e })) };
  });

  // The page a deep link / QR opens: the payer's bank app, reduced to one button.
  app.get<{ Params: { paymentId: string } }>('/fps/:paymentId', async (req, reply) => {
    const found = ctx.state.payment(req.params.paymentId);
    if (!found) return reply.code(404).type('text/html').send(page('FPS payment', '<p>Unknown payment.</p>'));
    const p = found.payment;
    const body =
      p.stage === 'awaiting_payer_qr'
        ? `<p>Payment ${escapeHtml(p.id)}: ${p.sum.sum} (minor units, ${escapeHtml(p.sum.currency_code)})</p>` +
          `<form method="POST" action="/sandbox/fps/${escapeHtml(p.id)}/pay"><label>Phone <input name="phone_number" placeholder="+79990001122"></label>` +
          '<button type="submit">Pay</button></form>'
        : `<p>Payment ${escapeHtml(p.id)} is ${escapeHtml(p.status)}; nothing to pay.</p>`;
    return reply.type('text/html').send(page('FPS payment', body));
  });

  app.post<{ Params: { paymentId: string } }>('/fps/:paymentId/pay', async (req, reply) => {
    const { phone_number } = bodyOf(req, fpsPayBody);
    const { session } = payQr(ctx, req.params.paymentId, phone_number);
    if (isFormPost(req))
      return reply.type('text/html').send(page('FPS payment', '<p>Paid. You can return to the shop.</p>'));
    return { status: 'ok', session_info: ctx.view.session(session) };
  });

  app.post('/chargebacks', async (req) => {
    const body = bodyOf(req, chargebackBody);
    const session = ctx.state.sessions.get(body.session_id);
    if (!session) throw new ApiError('repository_record_not_found', 'session_id');
    chargeback(
      ctx,
      session,
      body.sum_info ? { sum: body.sum_info.sum, currency_code: body.sum_info.currency_code } : undefined,
    );
    return { status: 'ok', session_info: ctx.view.session(session) };
  });
};
