/**
 * The same package from CommonJS (`require`): a backend on an older module system creates a session,
 * reads it back by id, and gets the same session for the same reference. Prints one JSON line.
 */
// Compiled to require() (a .cts file): the package's CommonJS entry and declarations are the ones used.
import * as client from '@paysaga/client';

async function main(): Promise<void> {
  const baseUrl = process.env.PAYSAGA_URL;
  const token = process.env.PAYSAGA_TOKEN;
  const card = process.env.TEST_CARD_NUMBER;
  if (!baseUrl || !token || !card)
    throw new Error('PAYSAGA_URL, PAYSAGA_TOKEN and TEST_CARD_NUMBER are needed');
  const paysaga = new client.PaysagaApiClient({ baseUrl, token });
  const input: client.CheckoutInput = {
    method: 'card',
    reference: `pkg-cjs-${Date.now()}`,
    amount: { amount: 500, currency: 'rub' },
    card: { card_number: card, card_exp_month: '12', card_exp_year: '30', card_code: '123' },
    customer: { user_id: 'package-test' },
  };
  const created: client.WithResponse<client.Session> = await paysaga.checkouts.create(input, { waitMs: 0 });
  const again = await paysaga.checkouts.create(input, { waitMs: 0 });
  const read = await paysaga.sessions.get(created.sessionId);
  await paysaga.close();
  console.log(
    JSON.stringify({
      created: { sessionId: created.sessionId, status: created.lastResponse.status },
      again: { sessionId: again.sessionId, replayed: again.lastResponse.replayed },
      read: { sessionId: read.sessionId, kind: read.kind, reference: read.reference },
    }),
  );
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
