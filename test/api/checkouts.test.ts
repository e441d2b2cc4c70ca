/**
 * POST /v1/checkouts over HTTP against the real stack: sessions are created once per reference or
 * Idempotency-Key, bad input is refused naming field and rule with nothing started, and early return
 * answers with the 3-D Secure redirect.
 */
import { card, finished, FRICTIONLESS, ref, rub, useApiStack, THREE_DS, workflowsFor } from './api-stack';
import { TEST_CARD } from '../../sandbox/test-cards';

jest.setTimeout(60_000);

const s = useApiStack();

const checkout = (
  reference: string | undefined,
  pan = FRICTIONLESS,
  extra: Record<string, unknown> = {},
) => ({
  method: 'card',
  ...(reference ? { reference } : {}),
  amount: rub(1_000),
  card: card(pan),
  customer: { user_id: 'u1' },
  ...extra,
});

async function sandboxSessions(): Promise<number> {
  return (await s.stack.sandbox.stats()).stats.sessions ?? 0;
}

describe('POST /v1/checkouts', () => {
  it('card: 201 with the session, Location and links; the payment succeeds; no card number comes back', async () => {
    const res = await s.call('POST', '/v1/checkouts', { body: checkout(ref('card')) });
    expect(res.status).toBe(201);
    expect(res.body.sessionId).toMatch(/^ps_/);
    expect(res.body.kind).toBe('card_checkout');
    expect(res.headers.location).toBe(`/v1/sessions/${res.body.sessionId}`);
    expect(res.body.links).toEqual({
      self: `/v1/sessions/${res.body.sessionId}`,
      temporal: `http://127.0.0.1:8233/namespaces/default/workflows/${res.body.sessionId}`,
    });
    expect(res.text.includes(FRICTIONLESS)).toBe(false);
    expect((await finished(s, res.body.sessionId)).phase).toBe('succeeded');
  });

  it('same Idempotency-Key: same session (200, Idempotent-Replayed), one session and one charge at the provider', async () => {
    const key = ref('idem');
    const before = await sandboxSessions();
    const a = await s.call('POST', '/v1/checkouts', { body: checkout(undefined), idempotencyKey: key });
    expect(a.status).toBe(201);
    expect(a.body.reference).toBe(key);
    const b = await s.call('POST', '/v1/checkouts', { body: checkout(undefined), idempotencyKey: key });
    expect(b.status).toBe(200);
    expect(b.headers['idempotent-replayed']).toBe('true');
    expect(b.body.sessionId).toBe(a.body.sessionId);
    // the body's reference equal to the header is the same request too
    const c = await s.call('POST', '/v1/checkouts', { body: checkout(key), idempotencyKey: key });
    expect(c.body.sessionId).toBe(a.body.sessionId);
    await finished(s, a.body.sessionId);
    const d = await s.call('POST', '/v1/checkouts', { body: checkout(key) });
    expect(d.status).toBe(200);
    expect(d.body.sessionId).toBe(a.body.sessionId);
    expect(d.body.phase).toBe('succeeded');
    expect((await sandboxSessions()) - before).toBe(1);
    const ledger = await s.stack.sandbox.ledger(a.body.sessionId);
    expect(ledger.entries.filter((e) => e.kind === 'capture' || e.kind === 'charge')).toHaveLength(1);
  });

  it("a sub-partner's site travels in extra_info as the provider asks, merged with the partner's own", async () => {
    const res = await s.call('POST', '/v1/checkouts', {
      body: checkout(ref('sub'), FRICTIONLESS, {
        subPartner: { submerchant: 'https://pay.sub.example/shop' },
        extraInfo: { order: 'A-17' },
      }),
    });
    expect(res.status).toBe(201);
    const paid = await finished(s, res.body.sessionId);
    expect(paid.lastSnapshot.payments[0].extra_info).toEqual({
      order: 'A-17',
      merchant: '',
      submerchant: 'https://pay.sub.example/shop',
    });
  });

  it('3-D Secure with ?wait: answers with the redirect in userAction', async () => {
    const res = await s.call('POST', '/v1/checkouts?wait=15000', {
      body: checkout(ref('3ds'), THREE_DS, { backUrl: 'https://shop.example/return' }),
    });
    expect(res.status).toBe(201);
    expect(res.body.phase).toBe('awaiting_payer');
    expect(res.body.userAction.destination_info.url_address).toContain('/sandbox/3ds/');
    await s.stack.payments.sessions.cancel(res.body.sessionId).catch(() => undefined);
  });

  describe('bad input: 400 naming field and rule, nothing started', () => {
    const cases: [string, Record<string, unknown>, { field: string; rule?: RegExp }[]][] = [
      [
        'unknown method',
        { method: 'cash', amount: rub(100) },
        [{ field: 'method', rule: /expected one of/ }],
      ],
      [
        'negative amount, bad currency',
        { ...checkout(undefined), amount: { amount: -5, currency: 'rubles' } },
        [
          { field: 'amount.amount', rule: /0/ },
          { field: 'amount.currency', rule: /3-letter/ },
        ],
      ],
      [
        'malformed card number',
        { ...checkout(undefined), card: { card_number: '4111-1111' } },
        [{ field: 'card.card_number', rule: /invalid_format/ }],
      ],
      ['missing card', { ...checkout(undefined), card: undefined }, [{ field: 'card' }]],
      ['back URL not http(s)', { ...checkout(undefined), backUrl: 'ftp://x' }, [{ field: 'backUrl' }]],
      [
        'FPS without payer id',
        { method: 'fps', amount: rub(100), customer: { contact_info: [{ email_address: 'a@b.c' }] } },
        [{ field: 'customer.user_id', rule: /required for FPS/ }],
      ],
      [
        'recurring CIT without backUrl',
        {
          method: 'recurring',
          amount: rub(100),
          token: 't',
          initiatedBy: 'client',
          customer: { user_id: 'u' },
        },
        [{ field: 'backUrl', rule: /3-D Secure/ }],
      ],
      // The provider requires the payer and a chargeable card: refused here, not accepted and failed later.
      ['payment without customer', { ...checkout(undefined), customer: undefined }, [{ field: 'customer' }]],
      [
        'card without expiry and code',
        { ...checkout(undefined), card: { card_number: TEST_CARD.visa } },
        [
          { field: 'card.card_exp_month', rule: /required to charge a card/ },
          { field: 'card.card_exp_year', rule: /required to charge a card/ },
          { field: 'card.card_code', rule: /required to charge a card/ },
        ],
      ],
      [
        'a partial finalize above the amount',
        { ...checkout(undefined), settings: { finalization: { mode: 'auto_partial', amount: 2_000_000 } } },
        [{ field: 'settings.finalization.amount', rule: /at most the payment amount/ }],
      ],
      [
        'a sub-partner without its site',
        { ...checkout(undefined), subPartner: { merchant: '' } },
        [{ field: 'subPartner.submerchant' }],
      ],
      [
        'a sub-partner with extraInfo that cannot merge with it',
        { ...checkout(undefined), subPartner: { submerchant: 'https://shop.example' }, extraInfo: [1] },
        [{ field: 'extraInfo', rule: /with subPartner, an object/ }],
      ],
      // Schemathesis found one: not a header value, so no provider call of the session could be sent.
      [
        'a sub-merchant id that is no header value',
        { ...checkout(undefined), submerchantId: 'm\u00e4rchant\n1' },
        [{ field: 'submerchantId', rule: /visible ASCII/ }],
      ],
      [
        'polling faster than the bounds',
        { ...checkout(undefined), settings: { polling: { initialMs: 1 } } },
        [{ field: 'settings.polling.initialMs' }],
      ],
    ];
    it.each(cases)('%s', async (_name, body, expected) => {
      const reference = ref('bad');
      const before = await sandboxSessions();
      const res = await s.call('POST', '/v1/checkouts', { body: { ...body, reference } });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
      expect(res.body.error.retryable).toBe(false);
      for (const e of expected) {
        const f = (res.body.error.fields as { field: string; rule: string }[]).find(
          (x) => x.field === e.field,
        );
        expect(f).toBeDefined();
        if (e.rule) expect(f!.rule).toMatch(e.rule);
      }
      expect(res.text.includes('4111')).toBe(false);
      expect(await sandboxSessions()).toBe(before);
      expect(await workflowsFor(s, reference)).toBe(0);
    });

    it('neither reference nor Idempotency-Key', async () => {
      const before = await sandboxSessions();
      const res = await s.call('POST', '/v1/checkouts', { body: checkout(undefined) });
      expect(res.status).toBe(400);
      expect(res.body.error.fields).toEqual([
        { field: 'reference', rule: 'required: send a reference field or an Idempotency-Key header' },
      ]);
      expect(await sandboxSessions()).toBe(before);
    });

    it('reference and Idempotency-Key differ', async () => {
      const reference = ref('mismatch');
      const before = await sandboxSessions();
      const res = await s.call('POST', '/v1/checkouts', {
        body: checkout(reference),
        idempotencyKey: ref('other'),
      });
      expect(res.status).toBe(400);
      expect(res.body.error.fields).toEqual([
        { field: 'reference', rule: 'must equal the Idempotency-Key header when both are given' },
      ]);
      expect(await sandboxSessions()).toBe(before);
      expect(await workflowsFor(s, reference)).toBe(0);
    });

    it('an Idempotency-Key that is not a valid reference', async () => {
      const res = await s.call('POST', '/v1/checkouts', { body: checkout(undefined), idempotencyKey: 'a b' });
      expect(res.status).toBe(400);
      expect(res.body.error.fields.map((f: { field: string }) => f.field)).toContain('Idempotency-Key');
    });

    it('?wait out of bounds', async () => {
      const reference = ref('wait');
      const res = await s.call('POST', '/v1/checkouts?wait=60000', { body: checkout(reference) });
      expect(res.status).toBe(400);
      expect(res.body.error.fields[0]).toMatchObject({ field: 'wait' });
      expect(await workflowsFor(s, reference)).toBe(0);
    });

    it('a body that is not JSON is refused without quoting it back', async () => {
      const res = await s.call('POST', '/v1/checkouts', { raw: `{"card":{"card_number":"${FRICTIONLESS}"` });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_json');
      expect(res.text.includes(FRICTIONLESS)).toBe(false);
    });

    it('a body with a "__proto__" key is refused, not read without it', async () => {
      const reference = ref('proto');
      const body = JSON.stringify(checkout(reference)).replace('{', '{"__proto__":{"x":1},');
      const res = await s.call('POST', '/v1/checkouts', { raw: body });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
      expect(res.body.error.fields).toEqual([
        { field: '__proto__', rule: 'no object in a request body may have this key' },
      ]);
      expect(await workflowsFor(s, reference)).toBe(0);
    });

    it('a body of white space alone is not JSON (only an empty body is no body)', async () => {
      for (const raw of ['\n', ' ', '\uFEFF', '\u00a0', '\u2028'])
        expect((await s.call('POST', '/v1/checkouts', { raw })).body.error?.code).toBe('invalid_json');
    });

    it('a JSON array body', async () => {
      const res = await s.call('POST', '/v1/checkouts', { body: [1, 2] });
      expect(res.status).toBe(400);
      expect(res.body.error.fields).toEqual([{ field: '(body)', rule: 'a JSON object' }]);
    });
  });
});
