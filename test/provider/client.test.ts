import { inspect } from 'node:util';
import {
  CardDetails,
  ProviderClient,
  ProviderError,
  ProviderOutcomeUnknownError,
  ProviderUnavailableError,
  ProviderValidationError,
  deriveIdempotencyKey,
  endpoints,
  isRetryableErrorCode,
  type EndpointName,
} from '../../provider';
import { generateTestKeyPair } from '../helpers/keys';
import { json, startRecordingServer } from '../helpers/recording-server';
import { TEST_CARD } from '../../sandbox/test-cards';

const okSession = { status: 'ok', session_info: { id: 'ps_1', transaction_status: 'created' } };
const PAN = TEST_CARD.visa;

/** One valid and one invalid body per endpoint, with the field the error must name. */
const cases: Record<EndpointName, { ok: unknown; bad: unknown; field: string }> = {
  publicToken: {
    ok: { card_tokenize: { allow_tokenization: true } },
    bad: { payment_form_config: { session_id: '' } },
    field: 'payment_form_config.session_id.not_blank',
  },
  recurringTokenDisable: {
    ok: { recurring_token_info: { token: 't' } },
    bad: { recurring_token_info: {} },
    field: 'recurring_token_info.token.not_null',
  },
  initiate: { ok: {}, bad: { sum_info: { sum: 0, currency_code: 'rub' } }, field: 'sum_info.sum.positive' },
  initCheckout: {
    ok: {
      payment_info: { type: 'recurring_token_info', recurring_token_info: { token: 't' } },
      sum_info: { sum: 1, currency_code: 'rub' },
      user_info: { user_id: 'u' },
    },
    bad: { payment_info: { type: 'fps_info' }, sum_info: { sum: 1, currency_code: 'rub' } },
    field: 'user_info.not_null',
  },
  initTransfer: {
    ok: {
      payout_info: {
        type: 'card_info',
        card_info: { type: 'tokenized_card', tokenized_card: { token: 'ct' } },
      },
      sum_info: { sum: 5, currency_code: 'RUB' },
    },
    bad: {
      payout_info: {
        type: 'card_info',
        card_info: { type: 'card_details', card_details: { card_number: '4111-1111' } },
      },
      sum_info: { sum: 5, currency_code: 'rub' },
    },
    field: 'payout_info.card_info.card_details.card_number.invalid_format',
  },
  startCheckout: {
    ok: { session_id: 'ps_1' },
    bad: { session_id: 'ps_1', payment_settings: { back_url: 'ftp://x' } },
    field: 'payment_settings.back_url.invalid_format',
  },
  startTransfer: {
    ok: { session_id: 'ps_1' },
    bad: { session_id: 'ps_1', sum_info: { sum: 1.5, currency_code: 'rub' } },
    field: 'sum_info.sum.invalid_type',
  },
  approve: { ok: { session_id: 'ps_1' }, bad: {}, field: 'session_id.not_null' },
  cancel: { ok: { session_id: 'ps_1' }, bad: { session_id: 42 }, field: 'session_id.invalid_type' },
  finalize: {
    ok: { session_id: 'ps_1', sum_info: { sum: 100, currency_code: 'rub' } },
    bad: { session_id: 'ps_1', sum_info: { sum: -1, currency_code: 'rub' } },
    field: 'sum_info.sum.positive',
  },
  refund: {
    ok: { session_id: 'ps_1' },
    bad: { session_id: 'ps_1', sum_info: { sum: 1, currency_code: 'roubles' } },
    field: 'sum_info.currency_code.invalid_format',
  },
  state: { ok: { session_id: 'ps_1' }, bad: { session_id: '' }, field: 'session_id.not_blank' },
  publicTokenState: {
    ok: { type: 'recurring_token', recurring_token: { token: 't' } },
    bad: { type: 'unknown' },
    field: 'type.invalid_value',
  },
  sbpBanks: { ok: {}, bad: { unexpected: 1 }, field: 'unknown_field' },
  identityCheck: {
    ok: {
      payout_info: {
        type: 'account_info',
        account_info: {
          payment_system: 'fps_info_verification',
          fps_info_verification: { phone_number: '79001234567', bank_identifier: 'b1' },
        },
      },
      participant_info: { payee_info: { full_name: 'A B' } },
    },
    bad: {
      payout_info: {
        type: 'account_info',
        account_info: {
          payment_system: 'fps_info_verification',
          fps_info_verification: { phone_number: 'call me', bank_identifier: 'b1' },
        },
      },
      participant_info: { payee_info: { full_name: 'A B' } },
    },
    field: 'payout_info.account_info.fps_info_verification.phone_number.invalid_format',
  },
};

const responses: Partial<Record<EndpointName, unknown>> = {
  publicToken: { status: 'ok', public_token: 'pt_1' },
  recurringTokenDisable: { status: 'ok', recurring_token_info: { token: 't', token_active: false } },
  publicTokenState: { status: 'ok', token_info: { type: 'recurring_token' } },
  sbpBanks: { status: 'ok', banks: [] },
};

const IDEMPOTENT = [
  'initiate',
  'initTransfer',
  'startTransfer',
  'initCheckout',
  'startCheckout',
  'approve',
  'finalize',
  'cancel',
  'refund',
];

describe('ProviderClient', () => {
  const key = generateTestKeyPair();
  let server: Awaited<ReturnType<typeof startRecordingServer>>;
  let client: ProviderClient;

  beforeAll(async () => {
    server = await startRecordingServer((req, res) => {
      const name = (Object.keys(endpoints) as EndpointName[]).find(
        (n) => req.url === `/api/v1/${endpoints[n].path}`,
      );
      json(res, 200, (name && responses[name]) ?? okSession);
    });
    client = new ProviderClient({
      baseUrl: server.url,
      projectId: 'p',
      privateKey: key.privateKey,
      maxRetries: 0,
    });
  });
  afterAll(async () => {
    await client.close();
    await server.close();
  });

  it('covers all 15 endpoints of the spec', () => {
    expect(Object.keys(endpoints)).toHaveLength(15);
    expect(Object.keys(cases).sort()).toEqual(Object.keys(endpoints).sort());
  });

  describe.each(Object.keys(cases) as EndpointName[])('%s', (name) => {
    it('validates before sending and names the field', async () => {
      const before = server.requests.length;
      const err = await client.call(name, cases[name].bad as never).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ProviderValidationError);
      expect((err as ProviderValidationError).retryable).toBe(false);
      expect((err as ProviderValidationError).fields.join(' ')).toContain(cases[name].field);
      expect(server.requests.length).toBe(before);
    });

    it(`carries the idempotency header only if it is one of the nine (${IDEMPOTENT.length})`, async () => {
      const key = deriveIdempotencyKey('ps_77', name);
      if (IDEMPOTENT.includes(name)) {
        await client.call(name, cases[name].ok as never, { idempotencyKey: key });
        expect(server.requests.at(-1)!.headers['x-partner-idempotency-key']).toBe(key);
        await client.call(name, cases[name].ok as never);
        expect(server.requests.at(-1)!.headers['x-partner-idempotency-key']).toBeUndefined();
      } else {
        await expect(client.call(name, cases[name].ok as never, { idempotencyKey: key })).rejects.toThrow(
          new Error(`invalid request for ${endpoints[name].path}: X-PARTNER-IDEMPOTENCY-KEY.not_supported`),
        );
        await client.call(name, cases[name].ok as never);
        expect(server.requests.at(-1)!.headers['x-partner-idempotency-key']).toBeUndefined();
      }
      expect(server.requests.at(-1)!.url).toBe(`/api/v1/${endpoints[name].path}`);
    });
  });

  it('exactly nine endpoints accept an idempotency key', () => {
    const accepting = (Object.keys(endpoints) as EndpointName[]).filter((n) => endpoints[n].idempotent);
    expect(accepting.sort()).toEqual([...IDEMPOTENT].sort());
  });

  it('refuses idempotency keys outside 4..64 characters', async () => {
    await expect(client.approve({ session_id: 'ps_1' }, { idempotencyKey: 'abc' })).rejects.toThrow(
      new Error('invalid request for transaction/approve: X-PARTNER-IDEMPOTENCY-KEY.length_4_64'),
    );
    await expect(client.approve({ session_id: 'ps_1' }, { idempotencyKey: 'x'.repeat(65) })).rejects.toThrow(
      new Error('invalid request for transaction/approve: X-PARTNER-IDEMPOTENCY-KEY.length_4_64'),
    );
    await expect(client.approve({ session_id: 'ps_1' }, { idempotencyKey: 'abcd' })).resolves.toBeDefined();
  });

  it('sends real card data on the wire but never prints it', async () => {
    const card = new CardDetails({
      card_number: PAN,
      card_exp_month: '12',
      card_exp_year: '30',
      card_code: '123',
    });
    for (const text of [String(card), JSON.stringify(card), inspect(card), inspect({ nested: { card } })]) {
      expect(text).not.toContain(PAN);
      expect(text).not.toContain('123"');
      expect(text).toContain('411111');
      expect(text).toContain('1111');
    }
    await client.startCheckout({
      session_id: 'ps_1',
      payment_info: { type: 'card_info', card_info: { type: 'card_details', card_details: card } },
    });
    const sent = JSON.parse(server.requests.at(-1)!.body.toString());
    expect(sent.payment_info.card_info.card_details).toEqual({
      card_number: PAN,
      card_exp_month: '12',
      card_exp_year: '30',
      card_code: '123',
    });
  });

  it('a validation error about a card never echoes the number', async () => {
    const err = (await client
      .startTransfer({
        session_id: 'ps_1',
        payout_info: {
          type: 'card',
          card: { type: 'card_details', card_details: { card_number: `${PAN}99999` } },
        },
      } as never)
      .catch((e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(ProviderValidationError);
    expect(err.message).not.toContain(PAN);
    expect(err.message).toContain('payout_info.card_info.card_details');
  });
});

describe('error classes', () => {
  it.each([
    ['idempotency_key_already_exists', 409, true],
    ['invalid_request', 400, false],
    ['idempotency_key_params_mismatch', 409, false],
    ['repository_record_not_found', 404, false],
    ['idempotency_key_not_supported', 400, false],
    ['qr_expired', 400, false],
    ['session_cancelled', 400, false],
    ['internal_error', 500, true],
    ['http_502', 502, true],
    ['some_new_code', 400, false],
  ])('%s (HTTP %i) retryable=%s', (code, status, retryable) => {
    expect(isRetryableErrorCode(code, status)).toBe(retryable);
    expect(new ProviderError('transaction/approve', code, 'd', status).retryable).toBe(retryable);
  });

  const key = generateTestKeyPair();

  /** Runs `body` with a recording server answering by `respond` and a client of it; closes both. */
  async function withServer(
    respond: Parameters<typeof startRecordingServer>[0],
    clientOptions: Omit<
      ConstructorParameters<typeof ProviderClient>[0],
      'baseUrl' | 'projectId' | 'privateKey'
    >,
    body: (client: ProviderClient, server: Awaited<ReturnType<typeof startRecordingServer>>) => Promise<void>,
  ): Promise<void> {
    const server = await startRecordingServer(respond);
    const client = new ProviderClient({
      baseUrl: server.url,
      projectId: 'p',
      privateKey: key.privateKey,
      ...clientOptions,
    });
    try {
      await body(client, server);
    } finally {
      await client.close();
      await server.close();
    }
  }

  it('maps an error envelope to ProviderError with code, description and endpoint', async () => {
    await withServer(
      (_r, res) =>
        json(res, 400, {
          status: 'error',
          error: { error_code: 'invalid_request', error_description: 'customer.reference.not_blank' },
        }),
      {},
      async (client, server) => {
        const err = (await client.state({ session_id: 'ps_1' }).catch((e: unknown) => e)) as ProviderError;
        expect(err).toBeInstanceOf(ProviderError);
        expect(err).toMatchObject({
          errorCode: 'invalid_request',
          description: 'customer.reference.not_blank',
          endpoint: 'transaction/state',
          retryable: false,
        });
        expect(server.requests).toHaveLength(1);
      },
    );
  });

  it('retries a 5xx of a call with an idempotency key, with the same bytes and key', async () => {
    let n = 0;
    await withServer(
      (_r, res) => (++n < 3 ? json(res, 503, { oops: true }) : json(res, 200, okSession)),
      {
        maxRetries: 3,
        retryBaseDelayMs: 5,
      },
      async (client, server) => {
        await client.approve({ session_id: 'ps_1' }, { idempotencyKey: 'ps_1:approve' });
        expect(server.requests).toHaveLength(3);
        expect(
          new Set(
            server.requests.map(
              (r) => r.body.toString() + r.headers['x-signature'] + r.headers['x-partner-idempotency-key'],
            ),
          ).size,
        ).toBe(1);
        // without a key a money-moving call is not resent
        n = 0;
        await expect(client.approve({ session_id: 'ps_1' })).rejects.toMatchObject({
          errorCode: 'http_503',
          retryable: true,
        });
        expect(server.requests).toHaveLength(4);
      },
    );
  });

  it('a server that accepts the request then drops the connection gives "outcome unknown", not resent', async () => {
    await withServer(
      (_r, res) => res.socket?.destroy(),
      {
        maxRetries: 3,
        retryBaseDelayMs: 5,
      },
      async (client, server) => {
        const err = await client
          .startCheckout({ session_id: 'ps_1' }, { idempotencyKey: 'ps_1:start' })
          .catch((e: unknown) => e);
        expect(err).toBeInstanceOf(ProviderOutcomeUnknownError);
        expect((err as ProviderOutcomeUnknownError).endpoint).toBe('transaction/start/checkout');
        expect(server.requests).toHaveLength(1);
      },
    );
  });

  it('a timeout after sending is "outcome unknown"', async () => {
    await withServer(
      () => undefined,
      {
        timeoutMs: 200,
      },
      async (client) => {
        await expect(client.refund({ session_id: 'ps_1' })).rejects.toBeInstanceOf(
          ProviderOutcomeUnknownError,
        );
      },
    );
  });

  it('a refused connection means not sent: retryable and resent', async () => {
    const server = await startRecordingServer(() => undefined);
    const url = server.url;
    await server.close();
    const client = new ProviderClient({
      baseUrl: url,
      projectId: 'p',
      privateKey: key.privateKey,
      maxRetries: 1,
      retryBaseDelayMs: 5,
    });
    try {
      const err = await client.approve({ session_id: 'ps_1' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ProviderUnavailableError);
      expect((err as ProviderUnavailableError).retryable).toBe(true);
    } finally {
      await client.close();
    }
  });
});

describe('deriveIdempotencyKey', () => {
  it('is deterministic per (workflow id, step), 4..64 characters, and differs by step', () => {
    const a = deriveIdempotencyKey('ps_123', 'start-checkout');
    expect(a).toBe(deriveIdempotencyKey('ps_123', 'start-checkout'));
    expect(a).not.toBe(deriveIdempotencyKey('ps_123', 'approve'));
    const long = deriveIdempotencyKey(`ps_${'9'.repeat(60)}`, 'refund-3');
    expect(long.length).toBeLessThanOrEqual(64);
    expect(long).toBe(deriveIdempotencyKey(`ps_${'9'.repeat(60)}`, 'refund-3'));
  });
});
