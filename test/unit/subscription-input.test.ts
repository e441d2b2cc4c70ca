/**
 * When a subscription's first charge may be: epoch milliseconds or an ISO time, refused with the field's
 * name when it looks like seconds or lies past what a date holds (issue 15 item 5: 8.7e15 failed the
 * workflow on every task; 1.7e9 charged at once).
 */
import { InputValidationError } from '../../client/errors';
import { parse } from '../../client/context';
import { subscriptionInput } from '../../client/inputs';

const base = {
  reference: 'sub-input-1',
  token: 'rt_1',
  amount: { amount: 1_000, currency: 'RUB' },
  intervalMs: 60_000,
  customer: { user_id: 'u1' },
};
const firstChargeAt = (value: unknown) =>
  parse(subscriptionInput, { ...base, firstChargeAt: value }).firstChargeAt;
const refusal = (value: unknown) => {
  try {
    firstChargeAt(value);
  } catch (err) {
    if (err instanceof InputValidationError) return err.fields;
    throw err;
  }
  throw new Error(`${String(value)} was accepted`);
};

describe('firstChargeAt', () => {
  it('takes epoch milliseconds and ISO times with an offset', () => {
    expect(firstChargeAt(1_800_000_000_000)).toBe(1_800_000_000_000);
    expect(firstChargeAt('2027-01-31T09:00:00+03:00')).toBe(Date.parse('2027-01-31T06:00:00Z'));
    expect(firstChargeAt(undefined)).toBeUndefined();
    // A time up to a day back charges at once.
    const hourAgo = Date.now() - 3_600_000;
    expect(firstChargeAt(hourAgo)).toBe(hourAgo);
  });

  it('refuses times more than a day back or more than two years ahead, naming the field', () => {
    expect(refusal('2020-01-01T00:00:00Z')).toEqual([
      { field: 'firstChargeAt', rule: expect.stringContaining('at most a day in the past') },
    ]);
    expect(refusal(Date.now() - 25 * 3_600_000)[0]?.field).toBe('firstChargeAt');
    expect(refusal(Date.now() + 3 * 365 * 24 * 3_600_000)).toEqual([
      { field: 'firstChargeAt', rule: 'a time at most two years ahead' },
    ]);
  });

  it('refuses epoch seconds, naming the field and saying what it looks like', () => {
    expect(refusal(1_700_000_000)).toEqual([
      { field: 'firstChargeAt', rule: expect.stringContaining('looks like seconds') },
    ]);
  });

  it('refuses times a date cannot hold and times past 2100', () => {
    for (const value of [8.7e15, 9_007_199_254_740_990, Date.UTC(2100, 0, 2), '2200-01-01T00:00:00Z'])
      expect(refusal(value)).toEqual([{ field: 'firstChargeAt', rule: expect.any(String) }]);
  });

  it('refuses what is not a time', () => {
    for (const value of [-1, 1.5e12 + 0.5, 'tomorrow', '2027-01-31T09:00:00'])
      expect(refusal(value)[0]?.field).toBe('firstChargeAt');
  });
});
