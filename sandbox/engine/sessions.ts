import type { z } from 'zod';
import type * as s from '../../provider/schemas';
import { timestamp } from '../clock';
import { invalid, notFound } from '../errors';
import type { Echo, InitiateDraft, Instrument, Money, SessionRecord } from '../model';
import { startPayment } from './checkout';
import type { FlowContext } from './context';
import { preparePaymentInstrument, preparePayoutInstrument, type PreparedInstrument } from './instruments';
import { startPayout } from './transfer';

/*
 * Sessions: initiate, and the start of their operation (start/* after initiate, or init/* in one call).
 * Every check runs before anything is created, so a refused request leaves no record and uses no id.
 */

type InitiateReq = z.output<typeof s.initiateRequest>;
type InitCheckoutReq = z.output<typeof s.initCheckoutRequest>;
type InitTransferReq = z.output<typeof s.initTransferRequest>;
type StartCheckoutReq = z.output<typeof s.startCheckoutRequest>;
type StartTransferReq = z.output<typeof s.startTransferRequest>;
/** The fields start/checkout and init/checkout share (Omit would lose them to the index signature). */
interface CheckoutFields {
  payment_info?: StartCheckoutReq['payment_info'];
  sum_info?: StartCheckoutReq['sum_info'];
  user_info?: StartCheckoutReq['user_info'];
  participant_info?: StartCheckoutReq['participant_info'];
  payment_settings?: StartCheckoutReq['payment_settings'];
  extra_info?: unknown;
}
interface TransferFields {
  payout_info?: StartTransferReq['payout_info'];
  sum_info?: StartTransferReq['sum_info'];
  user_info?: StartTransferReq['user_info'];
  participant_info?: StartTransferReq['participant_info'];
  extra_info?: unknown;
}
type Obj = Record<string, unknown>;

interface Plan<T> {
  commit: (session: SessionRecord) => T;
}

function money(m: { sum: number; currency_code: string } | undefined): Money | undefined {
  return m ? { sum: m.sum, currency_code: m.currency_code } : undefined;
}

function echoOf(f: {
  user_info?: unknown;
  participant_info?: unknown;
  payment_settings?: unknown;
  extra_info?: unknown;
}): Echo {
  const e: Echo = {};
  if (f.user_info !== undefined) e.user_info = structuredClone(f.user_info) as Obj;
  if (f.participant_info !== undefined) e.participant_info = structuredClone(f.participant_info) as Obj;
  if (f.payment_settings !== undefined)
    e.payment_settings = structuredClone(f.payment_settings) as Echo['payment_settings'];
  if (f.extra_info !== undefined) e.extra_info = structuredClone(f.extra_info);
  return e;
}

/** The instrument's kind without resolving it (resolution registers cards). */
function kindOf(
  info: { type: string; recurring_token_info?: { initiated_by?: string } } | undefined,
  drafted: Instrument | undefined,
) {
  if (!info)
    return drafted
      ? { kind: drafted.kind, initiatedBy: drafted.kind === 'recurring' ? drafted.initiatedBy : undefined }
      : undefined;
  const kinds: Record<string, Instrument['kind']> = {
    card_info: 'card',
    fps_info: 'fps',
    faster_payment_system_binding: 'fps_binding',
    recurring_token_info: 'recurring',
    account_info: 'fps_account',
  };
  return { kind: kinds[info.type]!, initiatedBy: info.recurring_token_info?.initiated_by };
}

function checkBinding(settings: Obj | undefined, sum: Money | undefined): void {
  // Rule 7: a binding asks for a token and carries a positive amount that is then ignored.
  if (settings?.allow_recurring !== true) throw invalid('payment_settings.allow_recurring', 'invalid_value');
  if (!sum) throw invalid('sum_info', 'not_null');
}

function planCheckout(
  ctx: FlowContext,
  projectId: string,
  draft: InitiateDraft,
  req: CheckoutFields,
  viaWidget = false,
): Plan<void> {
  const kind = kindOf(req.payment_info, draft.payment);
  const sum = money(req.sum_info) ?? draft.sum_info;
  const userInfo = (req.user_info ?? draft.user_info) as Obj | undefined;
  const participant = (req.participant_info ?? draft.participant_info) as Obj | undefined;
  const settings = (req.payment_settings ?? draft.payment_settings) as Obj | undefined;
  if (!kind) throw invalid('payment_info', 'not_null');
  if (!sum) throw invalid('sum_info', 'not_null');
  if (!userInfo) throw invalid('user_info', 'not_null');
  if (kind.kind === 'fps_account') throw invalid('payment_info.type', 'invalid_value');
  if (kind.kind === 'fps' || kind.kind === 'fps_binding') {
    // Rule 6: the payer is identified by the partner's user id and/or their IP address.
    const ip = (participant?.payer_info as Obj | undefined)?.ipv4_address;
    if (userInfo.user_id === undefined && ip === undefined) throw invalid('user_info.user_id', 'not_null');
  }
  if (kind.kind === 'fps_binding') checkBinding(settings, sum);
  if (kind.kind === 'recurring' && kind.initiatedBy === 'client' && typeof settings?.back_url !== 'string') {
    throw invalid('payment_settings.back_url', 'not_null');
  }
  const prepared: PreparedInstrument | undefined = req.payment_info
    ? preparePaymentInstrument(ctx.state, projectId, req.payment_info)
    : undefined;
  const echo = echoOf({
    user_info: userInfo,
    participant_info: participant,
    payment_settings: settings,
    extra_info: req.extra_info !== undefined ? req.extra_info : draft.extra_info,
  });
  return {
    commit: (session) => {
      startPayment(ctx, session, {
        instrument: prepared ? prepared() : draft.payment!,
        sum,
        echo,
        viaWidget,
      });
    },
  };
}

function planTransfer(ctx: FlowContext, draft: InitiateDraft, req: TransferFields): Plan<void> {
  const kind = kindOf(req.payout_info, draft.payout);
  const sum = money(req.sum_info) ?? draft.sum_info;
  if (!kind) throw invalid('payout_info', 'not_null');
  if (!sum) throw invalid('sum_info', 'not_null');
  const prepared = req.payout_info ? preparePayoutInstrument(ctx.state, req.payout_info) : undefined;
  const echo = echoOf({
    user_info: req.user_info ?? draft.user_info,
    participant_info: req.participant_info ?? draft.participant_info,
    extra_info: req.extra_info !== undefined ? req.extra_info : draft.extra_info,
  });
  return {
    commit: (session) => {
      startPayout(ctx, session, { instrument: prepared ? prepared() : draft.payout!, sum, echo });
    },
  };
}

function newSession(
  ctx: FlowContext,
  projectId: string,
  submerchantId: string | undefined,
  draft: InitiateDraft,
): SessionRecord {
  const now = timestamp();
  const session: SessionRecord = {
    id: ctx.state.ids.take('ps'),
    projectId,
    ...(submerchantId ? { submerchantId } : {}),
    createdAt: now,
    updatedAt: now,
    draft,
    payments: [],
    payouts: [],
    actions: {},
  };
  ctx.state.addSession(session);
  return session;
}

export interface Caller {
  projectId: string;
  submerchantId?: string;
}

export function initiate(ctx: FlowContext, caller: Caller, req: InitiateReq): SessionRecord {
  const sum = money(req.sum_info);
  if (req.payment_info?.type === 'faster_payment_system_binding')
    checkBinding(req.payment_settings as Obj | undefined, sum);
  const payment = req.payment_info
    ? preparePaymentInstrument(ctx.state, caller.projectId, req.payment_info)
    : undefined;
  const payout = req.payout_info ? preparePayoutInstrument(ctx.state, req.payout_info) : undefined;
  const draft: InitiateDraft = {
    ...(payment ? { payment: payment() } : {}),
    ...(payout ? { payout: payout() } : {}),
    ...(sum ? { sum_info: sum } : {}),
    ...echoOf(req),
  };
  return newSession(ctx, caller.projectId, caller.submerchantId, draft);
}

export function findSession(ctx: FlowContext, caller: Caller, sessionId: string): SessionRecord {
  const session = ctx.state.session(sessionId, caller.projectId);
  if (!session) throw notFound('session_id');
  return session;
}

function requireFresh(session: SessionRecord): void {
  if (session.payments.length > 0 || session.payouts.length > 0)
    throw invalid('session_id', 'already_started');
}

/**
 * An FPS payment whose QR expired "must be restarted" (spec, FPS payment): start/checkout on such a
 * session creates a new FPS payment, appended to `payments`, and the session is active again.
 */
function isExpiredFps(session: SessionRecord): boolean {
  const last = session.payments.at(-1);
  return (
    session.payouts.length === 0 &&
    last?.instrument.kind === 'fps' &&
    last.stage === 'done' &&
    last.error?.error_code === 'qr_expired'
  );
}

export function startCheckout(
  ctx: FlowContext,
  caller: Caller,
  req: StartCheckoutReq,
  viaWidget = false,
): SessionRecord {
  const session = findSession(ctx, caller, req.session_id);
  const restart = isExpiredFps(session);
  if (!restart) requireFresh(session);
  // A restart repeats what was asked: the expired payment's details unless the request gives new ones.
  const draft = restart ? restartDraft(session) : session.draft;
  if (restart && kindOf(req.payment_info, draft.payment)?.kind !== 'fps')
    throw invalid('payment_info.type', 'invalid_value');
  planCheckout(ctx, caller.projectId, draft, req, viaWidget).commit(session);
  return session;
}

function restartDraft(session: SessionRecord): InitiateDraft {
  const expired = session.payments.at(-1)!;
  return {
    ...session.draft,
    payment: expired.instrument,
    sum_info: expired.sum,
    ...echoOf(expired.echo),
  };
}

/**
 * A session may hold several payouts (spec: "several payouts"): another start/transfer adds a payout to
 * a session of payouts once none of them waits for the partner's decision (approve and cancel name the
 * session, not the payout, so two waiting at once could not be told apart). A session with a payment,
 * or an identity check, takes no payout.
 */
export function startTransfer(ctx: FlowContext, caller: Caller, req: StartTransferReq): SessionRecord {
  const session = findSession(ctx, caller, req.session_id);
  if (session.payments.length > 0 || session.payouts.some((p) => p.identityCheck))
    throw invalid('session_id', 'already_started');
  if (session.payouts.some((p) => p.stage === 'preparing' || p.stage === 'awaiting_approval'))
    throw invalid('session_id', 'decision_pending');
  planTransfer(ctx, session.draft, req).commit(session);
  return session;
}

export function initCheckout(ctx: FlowContext, caller: Caller, req: InitCheckoutReq): SessionRecord {
  const plan = planCheckout(ctx, caller.projectId, {}, req);
  const session = newSession(ctx, caller.projectId, caller.submerchantId, {});
  plan.commit(session);
  return session;
}

export function initTransfer(ctx: FlowContext, caller: Caller, req: InitTransferReq): SessionRecord {
  const plan = planTransfer(ctx, {}, req);
  const session = newSession(ctx, caller.projectId, caller.submerchantId, {});
  plan.commit(session);
  return session;
}

type IdentityReq = z.output<typeof s.identityCheckRequest>;

/** Rule 5: a session with one payout of nothing, confirmed by the service itself. */
export function identityCheck(ctx: FlowContext, caller: Caller, req: IdentityReq): SessionRecord {
  const prepared = preparePayoutInstrument(ctx.state, {
    type: 'account_info',
    account_info: req.payout_info.account_info,
  });
  const session = newSession(ctx, caller.projectId, caller.submerchantId, {});
  startPayout(ctx, session, {
    instrument: prepared(),
    sum: { sum: 0, currency_code: 'rub' },
    echo: echoOf({ participant_info: req.participant_info }),
    identityCheck: true,
  });
  return session;
}
