import { revealCard, type CardDetails, type HashedCardDetails } from '../../provider/schemas/card';
import type { PaymentInfoRequest, PayoutInfoRequest } from '../../provider/schemas';
import { isFpsBank } from '../banks';
import { invalid, notFound } from '../errors';
import type { Instrument } from '../model';
import type { SandboxState } from '../state';

/*
 * Turns a parsed payment_info / payout_info into an Instrument. Checks come first and throw; the returned
 * function is the only part that changes state (registers the card), so a refused request leaves no trace.
 */
export type PreparedInstrument = () => Instrument;

type CardInfo = Extract<PaymentInfoRequest, { type: 'card_info' }>['card_info'];

function prepareCard(
  state: SandboxState,
  field: string,
  info: CardInfo,
  forPayment: boolean,
): PreparedInstrument {
  const at = `${field}.card_info`;
  switch (info.type) {
    case 'card_details': {
      const card = revealCard(info.card_details as CardDetails);
      if (forPayment) {
        for (const f of ['card_exp_month', 'card_exp_year', 'card_code'] as const) {
          if (card[f] === undefined) throw invalid(`${at}.card_details.${f}`, 'not_null');
        }
      }
      const pan = card.card_number!;
      return () => ({ kind: 'card', via: 'card_details', cardId: state.vault.register(pan).id });
    }
    case 'hashed_card_details': {
      const hashed = revealCard(info.hashed_card_details as HashedCardDetails).hashed_card_number ?? '';
      const card = state.vault.byHashedNumber(hashed);
      if (!card) throw notFound(`${at}.hashed_card_details.hashed_card_number`);
      return () => ({ kind: 'card', via: 'hashed_card_details', cardId: card.id });
    }
    case 'tokenized_card': {
      const token = info.tokenized_card.token;
      const card = state.vault.byToken(token);
      if (!card) throw notFound(`${at}.tokenized_card.token`);
      return () => ({ kind: 'card', via: 'tokenized_card', cardId: card.id, token });
    }
  }
}

export function preparePaymentInstrument(
  state: SandboxState,
  projectId: string,
  info: PaymentInfoRequest,
): PreparedInstrument {
  switch (info.type) {
    case 'card_info':
      return prepareCard(state, 'payment_info', info.card_info, true);
    case 'fps_info': {
      const moneyPurpose = info.fps_info?.money_purpose;
      return () => ({ kind: 'fps', ...(moneyPurpose !== undefined ? { moneyPurpose } : {}) });
    }
    case 'faster_payment_system_binding':
      return () => ({ kind: 'fps_binding' });
    case 'recurring_token_info': {
      const { token, initiated_by } = info.recurring_token_info;
      // Payments use a token only on the project that obtained it; payouts are the cross-project case (rule 8).
      const record = state.tokens.recurring.get(token);
      if (!record || record.projectId !== projectId)
        throw notFound('payment_info.recurring_token_info.token');
      return () => ({ kind: 'recurring', token, ...(initiated_by ? { initiatedBy: initiated_by } : {}) });
    }
  }
}

export function preparePayoutInstrument(state: SandboxState, info: PayoutInfoRequest): PreparedInstrument {
  switch (info.type) {
    case 'card_info':
      return prepareCard(state, 'payout_info', info.card_info, false);
    case 'recurring_token_info': {
      const { token } = info.recurring_token_info;
      if (!state.tokens.recurring.has(token)) throw notFound('payout_info.recurring_token_info.token');
      return () => ({ kind: 'recurring', token });
    }
    case 'account_info': {
      const { phone_number, bank_identifier } = info.account_info.fps_info_verification;
      if (!isFpsBank(bank_identifier))
        throw invalid('payout_info.account_info.fps_info_verification.bank_identifier', 'invalid_value');
      return () => ({ kind: 'fps_account', phone: phone_number, bank: bank_identifier });
    }
    case 'fps_info':
      // An FPS payout needs the recipient's account: account_info with fps_info_verification carries it.
      throw invalid('payout_info.type', 'invalid_value');
  }
}

/** Identity check and FPS payouts: see README ("registered in FPS"). */
export function isRegisteredFpsPhone(phone: string, registered: readonly string[] | undefined): boolean {
  const digits = phone.replace(/\D/g, '');
  if (registered) return registered.some((r) => r.replace(/\D/g, '') === digits);
  return !digits.endsWith('0000');
}
