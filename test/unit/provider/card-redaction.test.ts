/** provider/schemas/card.ts: the one place card data is masked, dropped or blanked. */
import {
  CardDetails,
  maskCardData,
  redactFields,
  redactPans,
  scrubCardData,
} from '../../../provider/schemas/card';
import { requestFingerprint } from '../../../sandbox/idempotency';
import { TEST_CARD } from '../../../sandbox/test-cards';

describe('card redaction', () => {
  const card = new CardDetails({ card_number: TEST_CARD.visa, card_code: '123', card_exp_month: '12' });

  it('a card prints BIN and last 4 only, in JSON and as text', () => {
    expect(JSON.stringify({ card })).not.toContain(TEST_CARD.visa);
    expect(JSON.stringify({ card })).toContain('411111');
    expect(String(card)).not.toContain('123');
  });

  it('maskCardData keeps BIN + last 4 of a number and no code; the sandbox fingerprints only that', () => {
    const body = {
      payment_info: { card_details: { card_number: TEST_CARD.visa, card_code: '123', card_exp_month: '12' } },
      payout_info: { pan: '4111-1111-1111-1111' },
    };
    expect(maskCardData(body)).toEqual({
      payment_info: {
        card_details: { card_number: '411111******1111', card_code: '****', card_exp_month: '12' },
      },
      payout_info: { pan: '411111******1111' },
    });
    const otherCode = structuredClone(body);
    otherCode.payment_info.card_details.card_code = '999';
    // The digest cannot be checked against guesses of the code or the hidden digits: they are not in it.
    expect(requestFingerprint('/x', otherCode)).toBe(requestFingerprint('/x', body));
    expect(requestFingerprint('/x', { ...body, amount: 2 })).not.toBe(requestFingerprint('/x', body));
  });

  it('scrubCardData drops card fields at any depth, whatever their case', () => {
    const echoed = {
      a: { Card_Number: TEST_CARD.visa, keep: 1 },
      list: [{ cvv: '123', pan: 'x', ok: true }],
    };
    expect(scrubCardData(echoed)).toEqual({ a: { keep: 1 }, list: [{ ok: true }] });
  });

  it('redactFields blanks card fields and the named secrets in log data, leaving instances to print themselves', () => {
    const line = { req: { card: { card_number: TEST_CARD.visa } }, privateKey: 'k', n: 1, card2: card };
    const out = redactFields(line, ['privateKey']) as Record<string, unknown>;
    expect(out).toEqual({ req: { card: '[redacted]' }, privateKey: '[redacted]', n: 1, card2: card });
    expect(JSON.stringify(out)).not.toContain(TEST_CARD.visa);
  });

  it('redactPans masks card-like digits in free text', () => {
    expect(redactPans(`no such card ${TEST_CARD.mastercard}`)).toBe('no such card 555555******4444');
  });

  it('redactPans masks numbers written in groups with spaces or dashes, and leaves short numbers be', () => {
    expect(redactPans('card 4111 1111 1111 1111 refused')).toBe('card 411111******1111 refused');
    expect(redactPans('card 4111-1111-1111-1111.')).toBe('card 411111******1111.');
    expect(redactPans('pan 5555 5555 5555 4444, cvv 123')).toBe('pan 555555******4444, cvv 123');
    expect(redactPans('order 2026-11-25 12:00, amount 100 000')).toBe(
      'order 2026-11-25 12:00, amount 100 000',
    );
    expect(redactPans('session ps_1795576063155979')).toBe('session ps_1795576063155979');
  });
});
