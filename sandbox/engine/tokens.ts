import type { z } from 'zod';
import { revealCard, type HashedCardDetails } from '../../provider/schemas/card';
import type * as s from '../../provider/schemas';
import { tokenTimestamp } from '../clock';
import { invalid, notFound } from '../errors';
import { opaqueToken } from '../ids';
import type { PublicTokenRecord, RecurringTokenRecord } from '../token-store';
import { renderRecurringToken } from '../view';
import type { FlowContext } from './context';
import type { Caller } from './sessions';

/* Public tokens (rule 1), token inquiry, recurring token disable (rule 2). */

const PUBLIC_TOKEN_LIFETIME_MS = 24 * 3600 * 1000;

type PublicTokenReq = z.output<typeof s.publicTokenRequest>;
type TokenStateReq = z.output<typeof s.publicTokenStateRequest>;

export function issuePublicToken(ctx: FlowContext, caller: Caller, req: PublicTokenReq): string {
  const form = req.payment_form_config;
  if (form) {
    if (ctx.state.tokens.paymentFormSessions.has(form.session_id))
      throw invalid('payment_form_config.session_id', 'not_unique');
    const session = ctx.state.session(form.session_id, caller.projectId);
    if (!session) throw notFound('payment_form_config.session_id');
    if (session.payments.length > 0 || session.payouts.length > 0)
      throw invalid('payment_form_config.session_id', 'already_started');
  }
  const fps = req.fps_widget;
  if (fps?.session_id !== undefined) {
    const taken = [...ctx.state.tokens.publicTokens.values()].some(
      (t) => t.fpsWidget?.session_id === fps.session_id,
    );
    if (taken) throw invalid('fps_widget.session_id', 'not_unique');
    const session = ctx.state.session(fps.session_id, caller.projectId);
    if (!session) throw notFound('fps_widget.session_id');
    if (session.payments.length > 0 || session.payouts.length > 0)
      throw invalid('fps_widget.session_id', 'already_started');
  }
  const now = Date.now();
  const record: PublicTokenRecord = {
    token: opaqueToken('pt'),
    projectId: caller.projectId,
    createdAtMs: now,
    expiresAtMs: now + ctx.timers.scaled(PUBLIC_TOKEN_LIFETIME_MS),
  };
  if (req.card_tokenize) {
    record.cardTokenize = {
      allowTokenization: req.card_tokenize.allow_tokenization,
      ...(req.card_tokenize.lang ? { lang: req.card_tokenize.lang } : {}),
    };
  }
  if (form) {
    record.paymentForm = {
      sessionId: form.session_id,
      showAutopayOption: form.show_autopay_option === true,
      ...(form.lang ? { lang: form.lang } : {}),
    };
  }
  if (req.fps_widget) record.fpsWidget = structuredClone(req.fps_widget);
  ctx.state.tokens.addPublic(record);
  return record.token;
}

export type WidgetKind = 'cardTokenize' | 'paymentForm' | 'fpsWidget';

/** Checks a public token for one widget operation; `use()` spends it (one operation per token). */
export function checkPublicToken(
  ctx: FlowContext,
  token: string,
  widget: WidgetKind,
): { record: PublicTokenRecord; use: () => void } {
  const record = ctx.state.tokens.publicTokens.get(token);
  if (!record) throw notFound('public_token');
  if (!record[widget]) throw invalid('public_token', 'wrong_widget');
  if (record.usedAtMs !== undefined) throw invalid('public_token', 'already_used');
  if (Date.now() >= record.expiresAtMs) throw invalid('public_token', 'expired');
  return {
    record,
    use: () => ctx.state.tokens.usePublic(record),
  };
}

function publicTokenInfo(r: PublicTokenRecord): Record<string, unknown> {
  const now = Date.now();
  return {
    type: 'public_token',
    token: r.token,
    token_active: r.usedAtMs === undefined && now < r.expiresAtMs,
    used: r.usedAtMs !== undefined,
    created_date: tokenTimestamp(r.createdAtMs),
    expiry_date: tokenTimestamp(r.expiresAtMs),
    widgets: [
      r.cardTokenize && 'card_tokenize',
      r.paymentForm && 'payment_form_config',
      r.fpsWidget && 'fps_widget',
    ].filter(Boolean),
    ...(r.paymentForm ? { session_id: r.paymentForm.sessionId } : {}),
    ...(typeof r.fpsWidget?.session_id === 'string' ? { session_id: r.fpsWidget.session_id } : {}),
  };
}

function recurringTokenInfo(ctx: FlowContext, t: RecurringTokenRecord): Record<string, unknown> {
  const out: Record<string, unknown> = { ...renderRecurringToken(t) };
  if (t.source.kind === 'card') {
    const card = ctx.state.vault.get(t.source.cardId);
    if (card) Object.assign(out, { card_last4: card.last4, card_network: card.network });
  }
  return out;
}

export function tokenState(ctx: FlowContext, caller: Caller, req: TokenStateReq): Record<string, unknown> {
  switch (req.type) {
    case 'card_info': {
      const hashed =
        revealCard(req.card_info.hashed_card_details as HashedCardDetails).hashed_card_number ?? '';
      const card = ctx.state.vault.byHashedNumber(hashed);
      if (!card) throw notFound('card_info.hashed_card_details.hashed_card_number');
      return {
        type: 'card_info',
        hashed_card_number: hashed,
        card_network: card.network,
        card_last4: card.last4,
      };
    }
    case 'public_token': {
      const r = ctx.state.tokens.publicTokens.get(req.public_token.token);
      if (!r || r.projectId !== caller.projectId) throw notFound('public_token.token');
      return publicTokenInfo(r);
    }
    case 'recurring_token': {
      const t = ctx.state.tokens.recurring.get(req.recurring_token.token);
      if (!t) throw notFound('recurring_token.token');
      return recurringTokenInfo(ctx, t);
    }
  }
}

export function disableRecurringToken(
  ctx: FlowContext,
  caller: Caller,
  token: string,
): Record<string, unknown> {
  const t = ctx.state.tokens.recurring.get(token);
  if (!t || t.projectId !== caller.projectId) throw notFound('recurring_token_info.token');
  ctx.state.tokens.disableRecurring(t);
  return renderRecurringToken(t);
}
