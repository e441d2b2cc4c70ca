/**
 * The verification helper backends use (client/event-verification.ts), against signatures made the
 * way the delivery activity makes them (platform/event-signature.ts) and, independently, by hand with
 * node:crypto following the algorithm in api/README.md.
 */
import { createHmac } from 'node:crypto';
import { eventSignatureHeader, generateEventSecret } from '../../../platform/event-signature';
import { eventId, type PaysagaEvent } from '../../../common/events';
import {
  PaysagaEventVerificationError,
  verifyPaysagaEvent,
  type EventVerificationReason,
} from '../../../client/http';

const secret = generateEventSecret();
const other = generateEventSecret();
const event: PaysagaEvent = {
  id: eventId('ps_abc', 3),
  type: 'session.succeeded',
  created: '2025-01-31T12:00:00.000Z',
  session_id: 'ps_abc',
  sequence: 3,
  data: { sessionId: 'ps_abc', phase: 'succeeded', money: { amount: 1000, currency: 'rub' } },
};
const body = JSON.stringify(event);
const now = 1_738_324_800;

function reasonOf(run: () => unknown): EventVerificationReason | 'none' {
  try {
    run();
    return 'none';
  } catch (err) {
    if (err instanceof PaysagaEventVerificationError) return err.reason;
    throw err;
  }
}

describe('verifyPaysagaEvent', () => {
  test('a good signature verifies and returns the parsed event', () => {
    const header = eventSignatureHeader(body, [secret], now);
    expect(verifyPaysagaEvent(body, header, [secret], 300, now)).toEqual(event);
    expect(verifyPaysagaEvent(Buffer.from(body), header, secret, 300, now + 299)).toEqual(event);
  });

  test('the documented algorithm, done by hand, makes a header the helper accepts', () => {
    const t = now;
    const v1 = createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
    expect(eventSignatureHeader(body, [secret], t)).toBe(`t=${t},v1=${v1}`);
    expect(verifyPaysagaEvent(body, `t=${t}, v1=${v1}`, [secret], 300, now).id).toBe(event.id);
  });

  test('a tampered body fails: no matching signature', () => {
    const header = eventSignatureHeader(body, [secret], now);
    const tampered = body.replace('"amount":1000', '"amount":1');
    expect(tampered).not.toBe(body);
    expect(reasonOf(() => verifyPaysagaEvent(tampered, header, [secret], 300, now))).toBe(
      'no_matching_signature',
    );
    expect(reasonOf(() => verifyPaysagaEvent(`${body} `, header, [secret], 300, now))).toBe(
      'no_matching_signature',
    );
  });

  test('a wrong secret fails: no matching signature', () => {
    const header = eventSignatureHeader(body, [secret], now);
    expect(reasonOf(() => verifyPaysagaEvent(body, header, [other], 300, now))).toBe('no_matching_signature');
  });

  test('a timestamp outside the tolerance fails, either side, even with a good signature', () => {
    const old = eventSignatureHeader(body, [secret], now - 301);
    const future = eventSignatureHeader(body, [secret], now + 301);
    expect(reasonOf(() => verifyPaysagaEvent(body, old, [secret], 300, now))).toBe('outside_tolerance');
    expect(reasonOf(() => verifyPaysagaEvent(body, future, [secret], 300, now))).toBe('outside_tolerance');
    expect(reasonOf(() => verifyPaysagaEvent(body, old, [secret], 600, now))).toBe('none');
  });

  test('a timestamp changed in the header breaks the signature', () => {
    const header = eventSignatureHeader(body, [secret], now - 1000);
    const moved = header.replace(`t=${now - 1000}`, `t=${now}`);
    expect(reasonOf(() => verifyPaysagaEvent(body, moved, [secret], 300, now))).toBe('no_matching_signature');
  });

  test('during a rotation two v1 sign: either secret alone verifies', () => {
    const header = eventSignatureHeader(body, [other, secret], now);
    expect(header.match(/v1=/g)).toHaveLength(2);
    expect(verifyPaysagaEvent(body, header, [secret], 300, now).id).toBe(event.id);
    expect(verifyPaysagaEvent(body, header, [other], 300, now).id).toBe(event.id);
    expect(verifyPaysagaEvent(body, header, [generateEventSecret(), other], 300, now).id).toBe(event.id);
    expect(reasonOf(() => verifyPaysagaEvent(body, header, [generateEventSecret()], 300, now))).toBe(
      'no_matching_signature',
    );
  });

  test.each([
    ['missing', undefined],
    ['empty', ''],
    ['no v1', `t=${now}`],
    ['no t', `v1=${'a'.repeat(64)}`],
    ['t twice', `t=${now},t=${now},v1=${'a'.repeat(64)}`],
    ['t not a number', `t=soon,v1=${'a'.repeat(64)}`],
    ['v1 not hex', `t=${now},v1=${'z'.repeat(64)}`],
    ['v1 short', `t=${now},v1=abcd`],
    ['not key=value', 'garbage'],
  ])('a bad header fails: %s', (_name, header) => {
    expect(reasonOf(() => verifyPaysagaEvent(body, header, [secret], 300, now))).toBe('bad_header');
  });

  test('unknown schemes (v0=, v2=) are ignored next to a good v1', () => {
    const header = `${eventSignatureHeader(body, [secret], now)},v0=deadbeef,v2=${'b'.repeat(64)}`;
    expect(verifyPaysagaEvent(body, header, [secret], 300, now).id).toBe(event.id);
  });

  test('a signed body that is not an event fails: bad body', () => {
    const raw = '{"hello":"world"}';
    const header = eventSignatureHeader(raw, [secret], now);
    expect(reasonOf(() => verifyPaysagaEvent(raw, header, [secret], 300, now))).toBe('bad_body');
    const notJson = 'not json';
    expect(
      reasonOf(() =>
        verifyPaysagaEvent(notJson, eventSignatureHeader(notJson, [secret], now), [secret], 300, now),
      ),
    ).toBe('bad_body');
  });

  test('secrets are whsec_ strings; a new one each time', () => {
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(secret).not.toBe(other);
  });

  test('the error says why, and never carries a secret', () => {
    const header = eventSignatureHeader(body, [secret], now);
    try {
      verifyPaysagaEvent(body, header, [other], 300, now);
      throw new Error('verified');
    } catch (err) {
      expect(err).toBeInstanceOf(PaysagaEventVerificationError);
      expect((err as PaysagaEventVerificationError).reason).toBe('no_matching_signature');
      expect((err as Error).message).toBe('no v1 signature matches: a wrong secret, or the body was altered');
      expect((err as Error).message).not.toContain(other);
    }
  });
});
