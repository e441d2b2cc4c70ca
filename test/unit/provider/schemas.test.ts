import { providerConfigFromEnv, resolveEnvironment } from '../../../provider';
import { paymentInfoRequest, sessionResponse, userAction, webhookEvent } from '../../../provider/schemas';

describe('response schemas understand the spec variants', () => {
  it('keeps unknown fields and accepts currency_code in any case', () => {
    const parsed = sessionResponse.parse({
      status: 'ok',
      new_top_level: true,
      session_info: {
        id: 'ps_1',
        transaction_status: 'completed',
        brand_new_field: { x: 1 },
        payments: [
          { id: 'pm_1', transaction_status: 'successful', sum_info: { sum: 100, currency_code: 'RUB' } },
        ],
      },
    });
    expect(parsed.session_info.payments![0]!.sum_info!.currency_code).toBe('rub');
    expect((parsed.session_info as Record<string, unknown>).brand_new_field).toEqual({ x: 1 });
    expect((parsed as Record<string, unknown>).new_top_level).toBe(true);
  });

  it('user_action: redirect, url/method and img are read as destination_info, url_address/http_method and qr_image', () => {
    expect(
      userAction.parse({
        type: 'redirect',
        redirect: { url: 'https://acs/x', method: 'post', extra_params: { PaReq: 'p', MD: 'm' } },
      }),
    ).toEqual({
      type: 'destination_info',
      destination_info: {
        url_address: 'https://acs/x',
        http_method: 'POST',
        extra_params: { PaReq: 'p', MD: 'm' },
      },
    });
    expect(
      userAction.parse({
        type: 'payment_qr',
        payment_qr: { qr_data: { qr_content: 'bank://pay', img: 'aW1n' } },
      }),
    ).toEqual({
      type: 'payment_qr',
      payment_qr: { qr_data: { qr_content: 'bank://pay', qr_image: 'aW1n' } },
    });
  });

  it('payment_info: recurrent and card are read as recurring_token_info and card_info', () => {
    expect(paymentInfoRequest.parse({ type: 'recurrent', recurrent: { token: 't1' } })).toEqual({
      type: 'recurring_token_info',
      recurring_token_info: { token: 't1' },
    });
    const card = paymentInfoRequest.parse({
      type: 'card',
      card: { type: 'tokenized_card', tokenized_card: { token: 'ct_1' } },
    });
    expect(card).toEqual({
      type: 'card_info',
      card_info: { type: 'tokenized_card', tokenized_card: { token: 'ct_1' } },
    });
  });

  it('a webhook with an upper-case currency and extra fields parses', () => {
    const e = webhookEvent.parse({
      type: 'checkout_refunded',
      fee_info: { fee: { merchant_fee: { sum: 1, currency_code: 'RUB' } } },
      session_info: {
        id: 'ps_1',
        transaction_status: 'completed',
        payments: [
          {
            id: 'pm_1',
            transaction_status: 'successful',
            moneyback: [{ id: 'rf_1', transaction_status: 'repaid', chargeback: true }],
          },
        ],
      },
    });
    expect(e.session_info.payments![0]!.moneyback![0]!.chargeback).toBe(true);
  });
});

describe('provider configuration', () => {
  const base = { PAYSAGA_PROJECT_ID: 'prj', PAYSAGA_PARTNER_PRIVATE_KEY: '/keys/p.pem' };

  it('has a test and a production environment, each with its own address and service keys', () => {
    const env = {
      ...base,
      PAYSAGA_PROVIDER_TEST_URL: 'https://test.psp.example',
      PAYSAGA_PROVIDER_PRODUCTION_URL: 'https://psp.example',
      PAYSAGA_PROVIDER_TEST_SERVICE_KEYS: '/keys/test-a.pem, /keys/test-b.pem',
      PAYSAGA_PROVIDER_PRODUCTION_SERVICE_KEYS: '/keys/prod.pem',
    };
    expect(resolveEnvironment(providerConfigFromEnv(env))).toEqual({
      name: 'test',
      baseUrl: 'https://test.psp.example',
      serviceKeys: ['/keys/test-a.pem', '/keys/test-b.pem'],
    });
    expect(resolveEnvironment(providerConfigFromEnv({ ...env, PAYSAGA_PROVIDER_ENV: 'production' }))).toEqual(
      {
        name: 'production',
        baseUrl: 'https://psp.example',
        serviceKeys: ['/keys/prod.pem'],
      },
    );
  });

  it('a custom base URL (the sandbox) overrides the environment address', () => {
    const c = providerConfigFromEnv({
      ...base,
      PAYSAGA_PROVIDER_URL: 'http://127.0.0.1:8090',
      PAYSAGA_LEGACY_HEADERS: '1',
    });
    expect(resolveEnvironment(c).baseUrl).toBe('http://127.0.0.1:8090');
    expect(c.legacyHeaders).toBe(true);
  });

  it('names what is missing or wrong', () => {
    expect(() => providerConfigFromEnv({})).toThrow(
      new Error(
        'provider configuration from environment is invalid: projectId: Invalid input: expected string, received undefined; partnerPrivateKey: Invalid input: expected string, received undefined',
      ),
    );
    expect(() => providerConfigFromEnv({ ...base, PAYSAGA_PROVIDER_ENV: 'staging' })).toThrow(
      new Error(
        'provider configuration from environment is invalid: environment: Invalid option: expected one of "test"|"production"',
      ),
    );
    expect(() => resolveEnvironment(providerConfigFromEnv(base))).toThrow(
      new Error('provider config: no base URL for the test environment'),
    );
  });
});
