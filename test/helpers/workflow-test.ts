/**
 * What the workflow integration tests (test/workflows/*.test.ts) share besides the stack itself: test
 * cards, amounts, unique references, and reading a session's outcome and ledger from a running stack.
 */
import { CardDetails } from '../../provider';
import type { SessionView } from '../../common/views';
import { startStack, type TestStack } from './stack';
import { finalView } from './final';
import { TEST_CARD } from '../../sandbox/test-cards';

/** Sandbox test cards: approved without 3-D Secure, and one that asks for it. */
export const FRICTIONLESS: string = TEST_CARD.visa;
export const THREE_DS: string = TEST_CARD.visa3ds;

export const card = (pan: string = FRICTIONLESS) =>
  new CardDetails({ card_number: pan, card_exp_month: '12', card_exp_year: '30', card_code: '123' });

export const rub = (amount: number) => ({ amount, currency: 'RUB' });

/** A batch of payouts to one FPS account in one session, one of `amounts` each (`<reference>-a`, -b, ...). */
export function startFpsPayoutBatch(stack: TestStack, reference: string, amounts: number[]) {
  const fps = { type: 'fps_account' as const, phone: '+79991112233', bankId: '100000000111' };
  return stack.payments.payouts.startBatch({
    reference,
    payouts: amounts.map((amount, i) => ({
      reference: `${reference}-${String.fromCharCode(97 + i)}`,
      amount: rub(amount),
      destination: fps,
    })),
  });
}

/** Unique references: `<prefix>-<p>-<now>-<n>` (`<p>-<now>-<n>` without a prefix), one counter a call. */
export function references(prefix?: string): (p: string) => string {
  let n = 0;
  const head = prefix === undefined ? '' : `${prefix}-`;
  return (p) => `${head}${p}-${Date.now()}-${++n}`;
}

/** Helpers over the stack `get` returns (read at call time, so it may be started in a beforeAll). */
export function sessionHelpers(get: () => TestStack) {
  return {
    /** A 3-D Secure card checkout, answered once its payer's redirect is there (or 15 s passed). */
    startThreeDs: (reference: string, amount = 2_000) =>
      get().payments.sessions.startCardCheckout(
        {
          reference,
          amount: rub(amount),
          card: card(THREE_DS),
          customer: { user_id: 'u1' },
          backUrl: 'https://shop.example/return',
        },
        { waitMs: 15_000 },
      ),

    /** The session workflow's result, once it has ended. */
    finished: <R = SessionView>(sessionId: string): Promise<R> =>
      finalView(get().temporal, sessionId) as Promise<R>,

    /** The sandbox ledger of the session as [kind, amount] pairs, in order. */
    moves: async (sessionId: string): Promise<[string, number][]> => {
      const ledger = await get().sandbox.ledger(sessionId);
      return ledger.entries.map((e) => [e.kind, e.amount]);
    },

    /** Follows the session (query) until `pred` holds. */
    until: async (
      sessionId: string,
      pred: (v: SessionView) => boolean,
      ms = 20_000,
    ): Promise<SessionView> => {
      const deadline = Date.now() + ms;
      for (;;) {
        const v = await get().payments.sessions.get(sessionId);
        if (pred(v)) return v;
        if (Date.now() > deadline)
          throw new Error(`session ${sessionId} never got there: ${JSON.stringify(v)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
  };
}

/**
 * The two stacks of the FPS tests, started before and closed after the enclosing block's tests:
 * `stack` with QRs that live 10 s (ample time for a payer to pay or confirm, even polling on a loaded
 * machine) and `shortQr` with 4 s ones (for tests that only wait for expiry). Service time × 0.01.
 */
export function fpsStacks(webhooks: boolean): { readonly stack: TestStack; readonly shortQr: TestStack } {
  const fx = {} as { stack: TestStack; shortQr: TestStack };
  beforeAll(async () => {
    fx.stack = await startStack({ webhooks, sandbox: { qrTtlSeconds: 1_000 } });
    fx.shortQr = await startStack({ webhooks, sandbox: { qrTtlSeconds: 400 } });
  });
  afterAll(async () => {
    await fx.stack?.close();
    await fx.shortQr?.close();
  });
  return fx;
}
