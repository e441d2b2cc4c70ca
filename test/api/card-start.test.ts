/**
 * Card data goes to the provider only while the session holds its start open for it, over HTTP on a
 * real stack. The case: the request that opened a card checkout died after starting its workflow and
 * before it could bind the reference or send the card; the session closed its start (canceled: card
 * data was never submitted); a repeat of the request, once the dead request's lease is over, opens the
 * reference again. It must not send the card: the provider would start a payment (and hold the payer's
 * money) for a session paysaga shows canceled and no longer follows.
 */
import { sql } from 'kysely';
import { finalView } from '../helpers/final';
import { card, FRICTIONLESS, ref, rub, useApiStack } from './api-stack';

jest.setTimeout(240_000);

const s = useApiStack();

/** The provider calls made for a session, in order (the sandbox's request log). */
async function calls(sessionId: string): Promise<{ endpoint: string; http_status: number }[]> {
  const res = await s.stack.sandbox.plain('GET', `/sandbox/requests?session_id=${sessionId}`);
  return res.body.requests;
}

describe('a card checkout whose opener died before sending the card', () => {
  it('a repeat after the session closed its start sends no card data: canceled, no payment at the provider', async () => {
    const body = {
      method: 'card',
      reference: ref('dead-opener'),
      amount: rub(4_200),
      card: card(FRICTIONLESS),
      customer: { user_id: 'u-dead-opener' },
    };
    // The first request opens the session and starts its workflow; its card never reaches the provider.
    await s.stack.sandbox.plain('POST', '/sandbox/faults', {
      rules: [{ kind: 'error_5xx', status: 503, path: 'transaction/start/checkout' }],
    });
    let sessionId: string;
    try {
      const first = await s.call('POST', '/v1/checkouts', { body });
      expect(first.status).toBe(503);
      const row = await s.stack.store.db
        .selectFrom('client_references')
        .select(['subject_id'])
        .where('reference', '=', body.reference)
        .executeTakeFirstOrThrow();
      sessionId = row.subject_id as string;
      expect(sessionId).toMatch(/^ps_/);
    } finally {
      await s.stack.sandbox.plain('DELETE', '/sandbox/faults');
    }

    // Nobody sends the card: the session closes its start once its claim and the start deadline pass.
    const closed = await finalView(s.stack.temporal, sessionId, 200_000);
    expect(closed).toMatchObject({
      phase: 'canceled',
      reason: { code: 'not_started', detail: 'card data was never submitted' },
    });

    // What a request that died between starting the workflow and binding the reference leaves behind:
    // the reference being opened, unbound, its lease over.
    await s.stack.store.db
      .updateTable('client_references')
      .set({ status: 'opening', subject_id: null, lease_until: sql<Date>`now() - interval '1 second'` })
      .where('reference', '=', body.reference)
      .execute();

    const before = (await calls(sessionId)).filter((c) => c.endpoint === 'transaction/start/checkout');
    expect(before.every((c) => c.http_status === 503)).toBe(true);
    const repeat = await s.call('POST', '/v1/checkouts?wait=5000', { body });
    expect(repeat.status).toBeLessThan(300);
    expect(repeat.body).toMatchObject({ sessionId, phase: 'canceled', final: true });

    // The provider never got the card: no start/checkout beyond the refused ones, no payment.
    const after = (await calls(sessionId)).filter((c) => c.endpoint === 'transaction/start/checkout');
    expect(after).toEqual(before);
    const state = await s.stack.provider.state({ session_id: sessionId });
    expect(state.session_info.payments ?? []).toEqual([]);
  });
});
