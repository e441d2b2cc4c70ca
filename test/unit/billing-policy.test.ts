/**
 * The pure rules of recurring billing: how a failed charge is classed from the provider's error code
 * (common/billing-policy.ts), and what a change in the middle of a period carries into the next one
 * (workflows/billing.ts prorationOf), each checked against arithmetic done here by hand.
 */
import { BILLING_DEFAULTS, classify, declineCodes, DEFAULT_DECLINE_CODES } from '../../common/billing-policy';
import { reason } from '../../common/reasons';
import { prorationOf } from '../../workflows/billing';

const policy = (over: Parameters<typeof declineCodes>[0] = {}, otherDeclines: 'soft' | 'hard' = 'soft') => ({
  declineCodes: declineCodes(over),
  otherDeclines,
});
const failed = (providerCode?: string) => reason('provider_error', undefined, { providerCode });

describe('decline classes', () => {
  it("the sandbox's test behaviours: thief is hard, loser is soft, a disabled token is hard", () => {
    const p = policy();
    expect(classify(failed('fraud_suspected'), p)).toBe('hard'); // customer.reference thief
    expect(classify(failed('insufficient_funds'), p)).toBe('soft'); // customer.reference loser
    expect(classify(failed('recurring_token_inactive'), p)).toBe('hard');
    expect(classify(failed('card_declined'), p)).toBe('soft');
    expect(classify(failed('internal_error'), p)).toBe('unavailable');
    // A refusal to open the charge's session is classed by its code too.
    expect(classify(reason('charge_refused', 'x', { providerCode: 'authentication_failed' }), p)).toBe(
      'unavailable',
    );
    expect(classify(reason('charge_refused', 'x', { providerCode: 'invalid_request' }), p)).toBe('hard');
  });

  it("a code in no list, or no code at all, is the policy's otherDeclines", () => {
    expect(classify(failed('do_not_honor'), policy())).toBe('soft');
    expect(classify(failed('do_not_honor'), policy({}, 'hard'))).toBe('hard');
    expect(classify(reason('charge_canceled'), policy())).toBe('soft');
    expect(classify(undefined, policy({}, 'hard'))).toBe('hard');
  });

  it("a partner's list moves a code to its class and keeps the other defaults", () => {
    const p = policy({ hard: ['card_declined'], unavailable: ['issuer_unavailable'] });
    expect(classify(failed('card_declined'), p)).toBe('hard');
    expect(p.declineCodes.soft).not.toContain('card_declined');
    expect(classify(failed('issuer_unavailable'), p)).toBe('unavailable');
    expect(classify(failed('insufficient_funds'), p)).toBe('soft');
    expect(p.declineCodes.hard).toEqual([...DEFAULT_DECLINE_CODES.hard, 'card_declined']);
    expect(BILLING_DEFAULTS.otherDeclines).toBe('soft');
  });
});

describe('proration with the next invoice', () => {
  const DAY = 86_400_000;
  const monthly = { interval: 'month' as const, count: 1, anchor: '2027-01-01T00:00:00Z', timeZone: 'UTC' };
  const jan1 = Date.UTC(2027, 0, 1);
  const feb1 = Date.UTC(2027, 1, 1);
  const mar1 = Date.UTC(2027, 2, 1);

  it('a price change: the difference for what is left of the period, rounded to the minor unit', () => {
    // 31-day January paid at 3100; on 22 January (10 days left) the price becomes 6200: +1000.
    const at = jan1 + 21 * DAY;
    const base = {
      now: at,
      runningFrom: jan1,
      runningTo: feb1,
      runningPrice: 3_100,
      schedule: monthly,
      nextDue: feb1,
    };
    expect(prorationOf({ ...base, nextPrice: 6_200 })).toBe(1_000);
    // Down to 1550: a credit of 500.
    expect(prorationOf({ ...base, nextPrice: 1_550 })).toBe(-500);
    // 999 -> 1000 with 10 of 31 days left: 0.32 of a unit rounds to 0.
    expect(prorationOf({ ...base, runningPrice: 999, nextPrice: 1_000 })).toBe(0);
    // 1000 -> 2000 with 1/3 of a 3-day period left: 333.33 -> 333.
    expect(
      prorationOf({
        now: jan1 + 2 * DAY,
        runningFrom: jan1,
        runningTo: jan1 + 3 * DAY,
        runningPrice: 1_000,
        schedule: { ...monthly, interval: 'day', count: 3 },
        nextDue: jan1 + 3 * DAY,
        nextPrice: 2_000,
      }),
    ).toBe(333);
  });

  it('no period running (before the first charge) or the change at its very end: nothing', () => {
    const base = { runningTo: feb1, runningPrice: 3_100, schedule: monthly, nextDue: feb1, nextPrice: 6_200 };
    expect(prorationOf({ ...base, now: jan1 })).toBe(0);
    expect(prorationOf({ ...base, now: feb1, runningFrom: jan1 })).toBe(0);
  });

  it('a schedule change: the unused time is credited, the time to the new due date charged at the new terms', () => {
    // Monthly at 3100 paid on 1 January; on 11 January (21 of 31 days left) it becomes every two months at
    // 5900 from the same anchor: its next date is 1 March, its period there 1 January to 1 March (59 days).
    const now = jan1 + 10 * DAY;
    const twoMonthly = { ...monthly, count: 2 };
    const credit = (3_100 * 21) / 31; // 2100
    const charge = (5_900 * (mar1 - now)) / (mar1 - jan1); // 5900 * 49/59 = 4900
    expect(
      prorationOf({
        now,
        runningFrom: jan1,
        runningTo: feb1,
        runningPrice: 3_100,
        schedule: twoMonthly,
        nextDue: mar1,
        nextPrice: 5_900,
      }),
    ).toBe(Math.round(charge - credit));
    expect(Math.round(charge - credit)).toBe(2_800);
  });
});
