import type { FastifyPluginAsync } from 'fastify';
import { startCheckoutRequest } from '../../provider/schemas';
import type { FlowContext } from '../engine/context';
import { startCheckout } from '../engine/sessions';
import { checkPublicToken } from '../engine/tokens';
import { ApiError, invalid } from '../errors';
import { escapeHtml, hiddenFields, page } from './html';
import { bodyOf, isFormPost } from './sandbox-common';
import { cardTokenizeBody, fpsWidgetBody, paymentFormBody } from './sandbox-schemas';

/**
 * The embeddable widgets, simulated: what the browser widget would send to the service with a public
 * token. Each accepts JSON (tests) or a form post from its HTML page (GET with ?public_token=).
 * One operation per token; the token is spent only when the operation is accepted.
 */
export const widgetRoutes: FastifyPluginAsync<{ ctx: FlowContext }> = async (app, { ctx }) => {
  const tokenQuery = (q: unknown) => String((q as Record<string, unknown>).public_token ?? '');

  app.get('/payment-form', async (req, reply) => {
    const token = tokenQuery(req.query);
    const record = ctx.state.tokens.publicTokens.get(token);
    const autopay = record?.paymentForm?.showAutopayOption
      ? '<label><input type="checkbox" name="autopay"> I agree to automatic payments</label>'
      : '';
    const body =
      '<form method="POST" action="/sandbox/widgets/payment-form">' +
      hiddenFields({ public_token: token }) +
      '<label>Card number <input name="card_number" inputmode="numeric"></label>' +
      '<label>Month <input name="card_exp_month" size="2"></label><label>Year <input name="card_exp_year" size="4"></label>' +
      '<label>CVC <input name="card_code" size="4"></label>' +
      `${autopay}<button type="submit">Pay</button></form>`;
    return reply.type('text/html').send(page('Payment', body));
  });

  app.post('/payment-form', async (req, reply) => {
    const body = bodyOf(req, paymentFormBody);
    const { record, use } = checkPublicToken(ctx, body.public_token, 'paymentForm');
    const form = record.paymentForm!;
    const session = ctx.state.session(form.sessionId, record.projectId);
    if (!session) throw new ApiError('repository_record_not_found', 'payment_form_config.session_id');
    const consent = body.autopay === true && form.showAutopayOption;
    const request = startCheckoutRequest.safeParse({
      session_id: session.id,
      payment_info: {
        type: 'card_info',
        card_info: {
          type: 'card_details',
          card_details: {
            card_number: body.card_number,
            card_exp_month: body.card_exp_month,
            card_exp_year: body.card_exp_year,
            card_code: body.card_code,
          },
        },
      },
      ...(consent
        ? { payment_settings: { ...(session.draft.payment_settings ?? {}), allow_recurring: true } }
        : {}),
    });
    if (!request.success) throw invalid('card', 'invalid');
    startCheckout(ctx, { projectId: record.projectId }, request.data, true);
    use();
    const payment = session.payments[0]!;
    if (isFormPost(req))
      return reply
        .type('text/html')
        .send(page('Payment', `<p>Payment ${escapeHtml(payment.id)} accepted.</p>`));
    return { status: 'ok', session_id: session.id, payment_id: payment.id };
  });

  /*
   * The FPS page (fps_widget public token): the payer asks for the QR, the page starts the session's FPS
   * payment and shows the QR and the deep link, which opens the sandbox's bank page (/sandbox/fps/<id>).
   */
  app.get('/fps', async (req, reply) => {
    const body =
      '<form method="POST" action="/sandbox/widgets/fps">' +
      hiddenFields({ public_token: tokenQuery(req.query) }) +
      '<p>Pay with the Faster Payments System: your bank app opens from a QR code or a link.</p>' +
      '<button type="submit">Show the QR code</button></form>';
    return reply.type('text/html').send(page('FPS payment', body));
  });

  app.post('/fps', async (req, reply) => {
    const body = bodyOf(req, fpsWidgetBody);
    const { record, use } = checkPublicToken(ctx, body.public_token, 'fpsWidget');
    const sessionId = record.fpsWidget!.session_id;
    if (typeof sessionId !== 'string') throw invalid('fps_widget.session_id', 'required');
    const session = ctx.state.session(sessionId, record.projectId);
    if (!session) throw new ApiError('repository_record_not_found', 'fps_widget.session_id');
    const request = startCheckoutRequest.safeParse({
      session_id: session.id,
      payment_info: { type: 'fps_info' },
    });
    if (!request.success) throw invalid('fps_widget', 'invalid');
    startCheckout(ctx, { projectId: record.projectId }, request.data, true);
    use();
    const payment = session.payments[0]!;
    // The QR appears once the shop has approved the payment (approve_pending): the page waits for it.
    if (isFormPost(req)) return reply.redirect(`/sandbox/widgets/fps/${encodeURIComponent(payment.id)}`, 303);
    return { status: 'ok', session_id: session.id, payment_id: payment.id };
  });

  app.get<{ Params: { paymentId: string } }>('/fps/:paymentId', async (req, reply) => {
    const found = ctx.state.payment(req.params.paymentId);
    const qr = found?.payment.userAction?.payment_qr?.qr_data;
    let body: string;
    if (!found) body = '<p>Unknown payment.</p>';
    else if (qr)
      body =
        '<p>Scan the code with your bank app, or open it on this device.</p>' +
        `<img id="qr" alt="QR code" width="240" height="240" src="data:image/svg+xml;base64,${escapeHtml(qr.qr_image)}">` +
        `<p><a id="deep-link" href="${escapeHtml(qr.qr_content)}">Open in the bank app</a></p>`;
    else if (found.payment.stage === 'preparing' || found.payment.stage === 'awaiting_approval')
      body = '<p id="waiting">Waiting for the shop to confirm the payment…</p>';
    else body = `<p>Payment ${escapeHtml(found.payment.id)} is ${escapeHtml(found.payment.status)}.</p>`;
    const refresh = found && !qr && found.payment.stage !== 'done';
    const html = page('FPS payment', body);
    return reply
      .type('text/html')
      .send(refresh ? html.replace('<head>', '<head><meta http-equiv="refresh" content="1">') : html);
  });

  app.get('/card-tokenize', async (req, reply) => {
    const body =
      '<form method="POST" action="/sandbox/widgets/card-tokenize">' +
      hiddenFields({ public_token: tokenQuery(req.query) }) +
      '<label>Card number <input name="card_number" inputmode="numeric"></label>' +
      '<label>Month <input name="card_exp_month" size="2"></label><label>Year <input name="card_exp_year" size="4"></label>' +
      '<label>Name on card <input name="name_on_card"></label><label>CVC <input name="card_code" size="4"></label>' +
      '<button type="submit">Save card</button></form>';
    return reply.type('text/html').send(page('Card', body));
  });

  app.post('/card-tokenize', async (req, reply) => {
    const body = bodyOf(req, cardTokenizeBody);
    const { record, use } = checkPublicToken(ctx, body.public_token, 'cardTokenize');
    const card = ctx.state.vault.register(body.card_number);
    const hashed = ctx.state.vault.issueHashed(card.id, {
      exp: body.card_exp_month !== undefined && body.card_exp_year !== undefined,
      name: body.name_on_card !== undefined,
      code: body.card_code !== undefined,
    });
    const cardToken = record.cardTokenize!.allowTokenization
      ? ctx.state.vault.issueToken(card.id)
      : undefined;
    use();
    const result = {
      status: 'ok',
      hashed_card_details: hashed,
      ...(cardToken ? { card_token: cardToken } : {}),
      card_info: {
        card_bin: card.bin,
        card_last4: card.last4,
        card_network: card.network,
        country_code_alpha3: card.country,
      },
    };
    if (isFormPost(req)) {
      return reply
        .type('text/html')
        .send(
          page(
            'Card',
            `<p>Card ${escapeHtml(card.bin)}…${escapeHtml(card.last4)} saved.</p><pre>${escapeHtml(JSON.stringify(result, null, 2))}</pre>`,
          ),
        );
    }
    return result;
  });
};
