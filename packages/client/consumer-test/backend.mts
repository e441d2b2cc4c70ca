/**
 * A backend service as a partner writes it, with nothing of paysaga but `@paysaga/client` (ESM): it
 * registers where its events go, takes a card payment, reads the session until it is final, and
 * verifies the event paysaga signs for it. Compiled with `tsc --strict` in a scratch project and run
 * against `paysaga dev` by test/packages/client-package.test.ts; prints one JSON line, never card data.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  EVENT_SIGNATURE_HEADER,
  PaysagaApiClient,
  PaysagaApiError,
  PaysagaEventVerificationError,
  verifyPaysagaEvent,
  type PaysagaEvent,
  type Session,
  type WithResponse,
} from '@paysaga/client';

const baseUrl = process.env.PAYSAGA_URL;
const token = process.env.PAYSAGA_TOKEN;
const card = process.env.TEST_CARD_NUMBER;
if (!baseUrl || !token || !card)
  throw new Error('PAYSAGA_URL, PAYSAGA_TOKEN and TEST_CARD_NUMBER are needed');

const paysaga = new PaysagaApiClient({ baseUrl, token });

// The backend's event receiver: every event is verified against the raw body before it is believed.
let secrets: string[] = [];
const verified: PaysagaEvent[] = [];
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const header = req.headers[EVENT_SIGNATURE_HEADER.toLowerCase()];
    try {
      verified.push(
        verifyPaysagaEvent(Buffer.concat(chunks), typeof header === 'string' ? header : undefined, secrets),
      );
      res.statusCode = 200;
    } catch (err) {
      res.statusCode = err instanceof PaysagaEventVerificationError ? 400 : 500;
    }
    res.end();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const { port } = receiver.address() as AddressInfo;

const endpoint = await paysaga.eventEndpoints.create({
  url: `http://127.0.0.1:${port}/paysaga-events`,
  events: ['session.succeeded'],
  description: '@paysaga/client package test',
});
secrets = [endpoint.secret];

const reference = `pkg-esm-${Date.now()}`;
let session: WithResponse<Session> = await paysaga.checkouts.create(
  {
    method: 'card',
    reference,
    amount: { amount: 12_345, currency: 'rub' },
    card: { card_number: card, card_exp_month: '12', card_exp_year: '30', card_code: '123' },
    customer: { user_id: 'package-test' },
  },
  { waitMs: 10_000 },
);
const deadline = Date.now() + 90_000;
while (!session.final && Date.now() < deadline)
  session = await paysaga.sessions.waitForChange(session.sessionId, {
    after: session.version,
    waitMs: 10_000,
  });

while (!verified.some((e) => e.session_id === session.sessionId) && Date.now() < deadline)
  await new Promise((r) => setTimeout(r, 200));
const event = verified.find((e) => e.session_id === session.sessionId);

// A body changed on the way is refused, with the reason in a field, not in words.
let tampered: string | undefined;
try {
  verifyPaysagaEvent('{"forged":true}', `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}`, secrets);
} catch (err) {
  if (err instanceof PaysagaEventVerificationError) tampered = err.reason;
}

// A bad request is a typed error naming the field.
let refused: { status: number; code: string; fields: string[] } | undefined;
try {
  await paysaga.checkouts.create({
    method: 'card',
    reference: `${reference}-bad`,
    amount: { amount: -1, currency: 'rub' },
    card: { card_number: card, card_exp_month: '12', card_exp_year: '30', card_code: '123' },
    customer: { user_id: 'package-test' },
  });
} catch (err) {
  if (err instanceof PaysagaApiError)
    refused = { status: err.status, code: err.code, fields: err.fields.map((f) => f.field) };
}

await paysaga.eventEndpoints.delete(endpoint.id);
await paysaga.close();
receiver.close();
console.log(
  JSON.stringify({
    sessionId: session.sessionId,
    reference: session.reference,
    phase: session.phase,
    final: session.final,
    captured: session.totals.captured,
    replayed: session.lastResponse.replayed,
    event: event && { type: event.type, sessionId: event.session_id, sequence: event.sequence },
    tampered,
    refused,
  }),
);
