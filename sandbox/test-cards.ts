/*
 * Test cards of the sandbox (README, "Test cards"). Any other number of 12-19 digits is accepted too:
 * its network follows from the BIN, it needs no 3-D Secure and it succeeds. No Luhn check is made
 * ("length and format validation of card fields: not shown").
 */

export interface CardProfile {
  network: string;
  country: string;
  /** a payment by this card goes through the 3-D Secure page */
  threeDs: boolean;
  /** the issuer declines payments by this card at authorization */
  declines: boolean;
}

/** The test cards by what they do: tests and demos take their numbers from here, never spell them. */
export const TEST_CARD = {
  visa: '4111111111111111',
  mastercard: '5555555555554444',
  mir: '2200000000000004',
  visa3ds: '4000000000003063',
  mastercard3ds: '5200000000001096',
  mir3ds: '2200000000000038',
  visaDeclined: '4000000000000002',
} as const;

export const TEST_CARDS: Readonly<Record<string, Readonly<Partial<CardProfile>> & { note: string }>> = {
  [TEST_CARD.visa]: { note: 'visa, frictionless, succeeds', country: 'USA' },
  [TEST_CARD.mastercard]: { note: 'mastercard, frictionless, succeeds', country: 'USA' },
  [TEST_CARD.mir]: { note: 'mir, frictionless, succeeds' },
  [TEST_CARD.visa3ds]: { note: 'visa, 3-D Secure challenge', threeDs: true, country: 'USA' },
  [TEST_CARD.mastercard3ds]: { note: 'mastercard, 3-D Secure challenge', threeDs: true, country: 'USA' },
  [TEST_CARD.mir3ds]: { note: 'mir, 3-D Secure challenge', threeDs: true },
  [TEST_CARD.visaDeclined]: {
    note: 'visa, declined by the issuer (card_declined)',
    declines: true,
    country: 'USA',
  },
};

export function networkOf(pan: string): string {
  const p2 = Number(pan.slice(0, 2));
  const p4 = Number(pan.slice(0, 4));
  if (pan.startsWith('4')) return 'visa';
  if ((p2 >= 51 && p2 <= 55) || (p4 >= 2221 && p4 <= 2720)) return 'mastercard';
  if (p4 >= 2200 && p4 <= 2204) return 'mir';
  if (p2 === 34 || p2 === 37) return 'amex';
  if (p2 === 35) return 'jcb';
  if (p2 === 62) return 'unionpay';
  return 'unknown';
}

export function cardProfile(pan: string): CardProfile {
  const known = TEST_CARDS[pan];
  return {
    network: networkOf(pan),
    country: known?.country ?? 'RUS',
    threeDs: known?.threeDs ?? false,
    declines: known?.declines ?? false,
  };
}
