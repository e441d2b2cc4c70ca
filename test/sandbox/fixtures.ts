/** Request bodies shared by the sandbox tests. */
import { TEST_CARD } from '../../sandbox/test-cards';

export const RUB = (sum: number) => ({ sum, currency_code: 'rub' });

export const CARDS = {
  frictionless: TEST_CARD.visa,
  threeDs: TEST_CARD.visa3ds,
  declined: TEST_CARD.visaDeclined,
};

export const cardPayment = (pan: string = CARDS.frictionless) => ({
  type: 'card_info',
  card_info: {
    type: 'card_details',
    card_details: { card_number: pan, card_exp_month: '12', card_exp_year: '2030', card_code: '123' },
  },
});

export const cardPayout = (pan: string = CARDS.frictionless) => ({
  type: 'card_info',
  card_info: { type: 'card_details', card_details: { card_number: pan } },
});

export const user = (reference?: string) => ({
  user_id: 'user-42',
  contact_info: [{ email_address: 'payer@example.com' }],
  ...(reference !== undefined ? { customer: { reference } } : {}),
});

export const isFinal = (s: { transaction_status: string }) =>
  s.transaction_status === 'completed' || s.transaction_status === 'canceled';

export const fpsPayment = (moneyPurpose?: string) => ({
  type: 'fps_info',
  fps_info: moneyPurpose ? { money_purpose: moneyPurpose } : {},
});

export const fpsAccount = (phone = '+79991234567', bank = '100000000111') => ({
  type: 'account_info',
  account_info: {
    payment_system: 'fps_info_verification',
    fps_info_verification: { phone_number: phone, bank_identifier: bank },
  },
});
