/**
 * A double charge planted behind paysaga's back, to prove the verdict sees one: the order of a session
 * that succeeded is charged a second time at the provider by a direct call outside paysaga (the partner's
 * key, a new provider session for the same order, approved and finalized by hand), exactly what paysaga
 * itself would have done had it opened a second session for a reference.
 */
import { CardDetails, ProviderClient } from '../../provider';
import type { SessionInfo } from '../../provider/schemas';
import { TEST_CARD } from '../../sandbox/test-cards';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function chargeOrderAgain(o: {
  sandboxUrl: string;
  projectId: string;
  partnerPrivateKey: string;
  order: string;
  amount: number;
}): Promise<string> {
  const provider = new ProviderClient({
    baseUrl: o.sandboxUrl,
    projectId: o.projectId,
    privateKey: o.partnerPrivateKey,
    maxRetries: 2,
    timeoutMs: 15_000,
  });
  try {
    const opened = await provider.initCheckout(
      {
        payment_info: {
          type: 'card_info',
          card_info: {
            type: 'card_details',
            card_details: new CardDetails({
              card_number: TEST_CARD.visa,
              card_exp_month: '12',
              card_exp_year: '30',
              card_code: '123',
            }),
          },
        },
        sum_info: { sum: o.amount, currency_code: 'rub' },
        user_info: { user_id: 'planted' },
        extra_info: { order: o.order },
      },
      { idempotencyKey: `planted-${o.order}`.slice(0, 64) },
    );
    const id = opened.session_info.id;
    const state = async () => (await provider.state({ session_id: id })).session_info;
    const until = async (what: string, done: (s: SessionInfo) => boolean) => {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const s = await state();
        if (done(s)) return s;
        if (Date.now() > deadline)
          throw new Error(`planted charge ${id}: no ${what} (${s.transaction_status})`);
        await sleep(300);
      }
    };
    await until('approve_pending', (s) => s.next_step === 'approve');
    await provider.approve({ session_id: id });
    await until('finalization_pending', (s) => s.next_step === 'finalize');
    await provider.finalize({ session_id: id });
    await until('capture', (s) => s.transaction_status === 'completed');
    return id;
  } finally {
    await provider.close();
  }
}
