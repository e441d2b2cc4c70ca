import type { SessionStatus } from '../provider/schemas';
import { tokenTimestamp } from './clock';
import { feeBase, renderFeeInfo, type FeeConfig } from './fees';
import type {
  Instrument,
  Money,
  OperationRecord,
  PaymentRecord,
  PayoutRecord,
  RefundRecord,
  SessionRecord,
} from './model';
import type { SandboxState } from './state';
import type { RecurringTokenRecord } from './token-store';

/*
 * session_info as the spec's resources show it, rendered from the internal records. Card data appears
 * only as card_last4 / card_bin / card_network / country_code_alpha3.
 */

export interface RenderOptions {
  /** webhooks "may show it in upper case" */
  upperCaseCurrency?: boolean;
}

/** After disabling, the spec says completed_date may show a meaningless date in 2000; the sandbox does. */
const DISABLED_TOKEN_DATE = '2000-01-01T00:00:00.000000+03:00';

export function sessionStatus(s: SessionRecord): SessionStatus {
  const ops: OperationRecord[] = [...s.payments, ...s.payouts];
  if (ops.length === 0) return 'created';
  if (
    ops.some(
      (o) =>
        o.stage === 'preparing' || o.stage === 'awaiting_approval' || o.stage === 'awaiting_finalization',
    )
  )
    return 'active';
  if (ops.some((o) => o.stage !== 'done')) return 'ongoing';
  return ops.some((o) => o.status === 'successful') ? 'completed' : 'canceled';
}

export function nextStep(s: SessionRecord): 'approve' | 'finalize' | undefined {
  const ops: OperationRecord[] = [...s.payments, ...s.payouts];
  if (ops.some((o) => o.stage === 'awaiting_approval')) return 'approve';
  if (ops.some((o) => o.stage === 'awaiting_finalization')) return 'finalize';
  return undefined;
}

export function maskPhone(phone: string): string {
  const digits = phone.replace(/\D/g, '');
  const plus = phone.trim().startsWith('+') ? '+' : '';
  if (digits.length <= 5) return `${plus}${digits}`;
  return `${plus}${digits[0]}${'*'.repeat(digits.length - 5)}${digits.slice(-4)}`;
}

export function renderRecurringToken(t: RecurringTokenRecord): Record<string, unknown> {
  return {
    token: t.token,
    created_date: tokenTimestamp(t.createdAtMs),
    completed_date: t.active ? tokenTimestamp(t.expiresAtMs) : DISABLED_TOKEN_DATE,
    token_active: t.active,
    type: 'recurring_token',
  };
}

export class SessionView {
  constructor(
    private readonly state: SandboxState,
    /** the project's fee setting; none: no fee_info anywhere */
    private readonly feesOf: (projectId: string) => FeeConfig | undefined = () => undefined,
  ) {}

  private money(m: Money, o: RenderOptions): Money {
    return {
      sum: m.sum,
      currency_code: o.upperCaseCurrency ? m.currency_code.toUpperCase() : m.currency_code,
    };
  }

  private cardInfo(cardId: string, via: string): Record<string, unknown> | undefined {
    const card = this.state.vault.get(cardId);
    if (!card) return undefined;
    return {
      type: via,
      card_last4: card.last4,
      card_bin: card.bin,
      card_network: card.network,
      country_code_alpha3: card.country,
    };
  }

  instrument(i: Instrument): Record<string, unknown> {
    switch (i.kind) {
      case 'card':
        return { type: 'card_info', card_info: this.cardInfo(i.cardId, i.via) };
      case 'fps':
        return {
          type: 'fps_info',
          fps_info: i.moneyPurpose === undefined ? {} : { money_purpose: i.moneyPurpose },
        };
      case 'fps_binding':
        return { type: 'faster_payment_system_binding' };
      case 'recurring': {
        const out: Record<string, unknown> = {
          type: 'recurring_token_info',
          recurring_token_info: { token: i.token, ...(i.initiatedBy ? { initiated_by: i.initiatedBy } : {}) },
        };
        const source = this.state.tokens.recurring.get(i.token)?.source;
        if (source?.kind === 'card') out.card_info = this.cardInfo(source.cardId, 'recurring_token');
        return out;
      }
      case 'fps_account':
        return {
          type: 'account_info',
          account_info: {
            payment_system: 'fps_info_verification',
            fps_info_verification: { phone_number: i.phone, bank_identifier: i.bank },
          },
        };
    }
  }

  private refund(r: RefundRecord, o: RenderOptions): Record<string, unknown> {
    return {
      id: r.id,
      transaction_status: r.status,
      created_date: r.createdAt,
      ...(r.completedAt ? { completed_date: r.completedAt } : {}),
      sum_info: this.money(r.sum, o),
      chargeback: r.chargeback,
      ...(r.transactionInfo ? { transaction_info: { ...r.transactionInfo } } : {}),
      ...(r.extraInfo !== undefined ? { extra_info: r.extraInfo } : {}),
    };
  }

  private common(op: OperationRecord, o: RenderOptions): Record<string, unknown> {
    const out: Record<string, unknown> = {
      id: op.id,
      transaction_status: op.status,
      created_date: op.createdAt,
    };
    if (op.completedAt) out.completed_date = op.completedAt;
    if (op.echo.user_info) out.user_info = structuredClone(op.echo.user_info);
    if (op.echo.participant_info) out.participant_info = structuredClone(op.echo.participant_info);
    out.sum_info = this.money(op.sum, o);
    if (op.echo.extra_info !== undefined) out.extra_info = structuredClone(op.echo.extra_info);
    const session = this.state.sessions.get(op.sessionId);
    const fees = session && this.feesOf(session.projectId);
    if (fees && op.status !== 'unsuccessful')
      out.fee_info = renderFeeInfo(
        fees,
        this.money({ sum: feeBase(op), currency_code: op.sum.currency_code }, o),
      );
    if (op.transactionInfo) out.transaction_info = { ...op.transactionInfo };
    return out;
  }

  payment(p: PaymentRecord, o: RenderOptions = {}): Record<string, unknown> {
    const out = this.common(p, o);
    // Not shown by the spec: once held funds are charged, sum_info shows what was charged (a partial
    // finalize charges less than was held), so the partner sees what moved.
    if (p.status === 'successful' && p.captured > 0 && p.captured !== p.sum.sum)
      out.sum_info = this.money({ sum: p.captured, currency_code: p.sum.currency_code }, o);
    out.payment_info = this.instrument(p.instrument);
    if (p.payerPhone) {
      const user = (out.user_info ?? {}) as Record<string, unknown>;
      const contacts = Array.isArray(user.contact_info) ? (user.contact_info as unknown[]) : [];
      out.user_info = { ...user, contact_info: [...contacts, { phone_number: maskPhone(p.payerPhone) }] };
    }
    if (p.echo.payment_settings) out.payment_settings = { ...p.echo.payment_settings };
    if (p.recurringToken) {
      const t = this.state.tokens.recurring.get(p.recurringToken);
      if (t) out.recurring_token_info = renderRecurringToken(t);
    }
    if (p.userAction) out.user_action = structuredClone(p.userAction);
    if (p.moneyback.length > 0) out.moneyback = p.moneyback.map((r) => this.refund(r, o));
    if (p.error) out.error = { ...p.error };
    return out;
  }

  payout(p: PayoutRecord, o: RenderOptions = {}): Record<string, unknown> {
    const out = this.common(p, o);
    out.payout_info = this.instrument(p.instrument);
    if (p.error) out.error = { ...p.error };
    return out;
  }

  session(s: SessionRecord, o: RenderOptions = {}): Record<string, unknown> {
    const status = sessionStatus(s);
    const out: Record<string, unknown> = {
      id: s.id,
      transaction_status: status,
      created_date: s.createdAt,
      updated_at: s.updatedAt,
    };
    const step = nextStep(s);
    if (step) out.next_step = step;
    if (s.payments.length > 0) out.payments = s.payments.map((p) => this.payment(p, o));
    if (s.payouts.length > 0) out.payouts = s.payouts.map((p) => this.payout(p, o));
    if (Object.keys(s.actions).length > 0) out.actions = { ...s.actions };
    if (s.transactionInfo) out.transaction_info = { ...s.transactionInfo };
    if (status === 'canceled') {
      const cause = [...s.payments, ...s.payouts].find((op) => op.error)?.error;
      out.error = {
        error_code: 'session_cancelled',
        error_description: cause ? `session canceled: ${cause.error_code}` : 'session canceled',
      };
    }
    return out;
  }
}
