/**
 * Webhook events that reach every part of the provider's event schema once, read when the module loads
 * (common/webhook-proof.ts says why): one with every field the contract names, each union and
 * normalization taken, and one that fails deep inside, for the path that reports why. A field the
 * contract gains later and these miss is no error: its first reading throws, and that event goes to the
 * worker's check as every event did before.
 */
const at = '2026-01-01T00:00:00Z';
const sum = { sum: 100, currency_code: 'RUB' };
const card = {
  type: 'card_info',
  card_info: {
    type: 'card_details',
    card_last4: '1111',
    card_bin: '411111',
    card_network: 'visa',
    country_code_alpha3: 'USA',
  },
};
const operation = {
  id: 'op_0',
  transaction_status: 'successful',
  created_date: at,
  completed_date: at,
  user_info: { user_id: 'u', contact_info: [{ email_address: 'a@b.c' }], customer: { reference: 'c' } },
  participant_info: {
    payee_info: { given_name: 'A', family_name: 'B' },
    payer_info: { ipv4_address: '127.0.0.1' },
  },
  sum_info: sum,
  extra_info: { any: 1 },
  fee_info: { fee: { merchant_fee: sum }, net: sum, gross: sum },
  transaction_info: { retrieval_ref_number: '1', authorization_code: '2', fps_transaction_id: '3' },
  error: { error_code: 'e', error_description: 'd' },
};

export const WARM_EVENTS: unknown[] = [
  {
    type: 'checkout_results',
    session_info: {
      id: 'ps_0',
      transaction_status: 'completed',
      created_date: at,
      updated_at: at,
      next_step: 'approve',
      payments: [
        {
          ...operation,
          payment_info: card,
          payment_settings: { back_url: 'https://example.com/back', allow_recurring: true },
          recurring_token_info: {
            token: 't',
            created_date: at,
            completed_date: at,
            token_active: true,
            type: 'recurring_token',
          },
          user_action: {
            type: 'redirect',
            redirect: { url: 'https://example.com/3ds', method: 'post', domain: 'x', additional_params: {} },
          },
          moneyback: [
            {
              id: 'rf_0',
              transaction_status: 'completed',
              created_date: at,
              completed_date: at,
              sum_info: sum,
            },
            {
              id: 'rf_1',
              transaction_status: 'repaid',
              sum_info: sum,
              chargeback: true,
              transaction_info: {},
            },
          ],
        },
        {
          ...operation,
          payment_info: { type: 'faster_payment_system_binding', fps_info: { money_purpose: 'p' } },
          user_action: { type: 'payment_qr', payment_qr: { qr_data: { qr_content: 'q', img: 'i' } } },
        },
        {
          ...operation,
          payment_info: {
            type: 'recurring_token_info',
            recurring_token_info: { token: 't', initiated_by: 'm' },
          },
        },
      ],
      payouts: [
        { ...operation, payout_info: card },
        {
          ...operation,
          payout_info: {
            type: 'account_info',
            account_info: {
              payment_system: 'fps_info_verification',
              fps_info_verification: { phone_number: '+79990000000', bank_identifier: '1' },
            },
          },
        },
      ],
      actions: { approve: at },
      transaction_info: { fps_transaction_id: '3' },
      error: { error_code: 'e' },
    },
  },
  {
    type: '',
    session_info: {
      id: 1,
      transaction_status: null,
      payments: [
        { id: 'p', transaction_status: 's', sum_info: { sum: -1 }, user_action: {}, payment_info: {} },
      ],
      payouts: [{}],
      actions: { a: 1 },
      error: {},
    },
  },
];
