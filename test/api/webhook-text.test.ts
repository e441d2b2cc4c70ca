/**
 * The webhook receiver refuses a signed body that is not well-formed text (provider/webhook-verifier.ts)
 * with 400 naming the rule, before anything is routed or signaled, and logs the refusal with its rule
 * (never the body). The same body made well-formed is an event for a session with no workflow yet: 503.
 */
import { sign } from 'node:crypto';
import { Writable } from 'node:stream';
import { request } from 'undici';
import { buildApi } from '../../api/app';
import { apiDepsFor, listenLocally, useApiStack } from './api-stack';

/* eslint-disable @typescript-eslint/no-explicit-any -- answers and log lines are inspected field by field */

describe('the webhook receiver reads well-formed text only', () => {
  const s = useApiStack({ webhooks: false });

  it('answers 400 ill_formed_text for a lone surrogate or bytes that are not UTF-8, and logs why', async () => {
    const lines: any[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    const api = buildApi({ ...apiDepsFor(s.stack), apiTokens: ['t'], logger: { level: 'info', stream } });
    const { publicUrl } = await listenLocally(api);
    const post = async (raw: Buffer) => {
      const res = await request(`${publicUrl}/webhooks/provider`, {
        method: 'POST',
        body: raw,
        headers: {
          'content-type': 'application/json',
          'x-signature': sign('sha256', raw, s.stack.sandbox.keys.service.privateKey).toString('base64'),
        },
      });
      return { status: res.statusCode, body: (await res.body.json()) as any };
    };
    const event = (note: string) =>
      Buffer.from(
        `{"type":"checkout_results","session_info":{"id":"ps_770001","transaction_status":"completed","note":${note}}}`,
      );
    try {
      const surrogate = await post(event('"paid \\ud800"'));
      expect(surrogate.status).toBe(400);
      expect(surrogate.body.error).toMatchObject({ code: 'invalid_webhook', retryable: false });
      expect(surrogate.body.error.message).toBe(
        'ill_formed_text: session_info.note: a JSON string with a lone UTF-16 surrogate (\\ud800-\\udfff unpaired), not text',
      );
      const latin1 = await post(Buffer.concat([event('"caf'), Buffer.from([0xe9]), Buffer.from('"}}')]));
      expect(latin1.status).toBe(400);
      expect(latin1.body.error.message).toBe(
        'ill_formed_text: body: not UTF-8 (a byte sequence that encodes no character)',
      );
      // Well-formed, the same event goes on to routing: no workflow for it yet.
      expect((await post(event('"paid \\ud83d\\ude00"'))).status).toBe(503);
    } finally {
      await api.close();
    }
    const refused = lines.filter((l) => l.msg === 'provider webhook' && l.status === 400);
    expect(refused).toHaveLength(2);
    expect(refused.map((l) => [l.level, l.outcome, l.reason])).toEqual([
      [40, 'rejected', 'ill_formed_text'],
      [40, 'rejected', 'ill_formed_text'],
    ]);
    expect(JSON.stringify(lines)).not.toContain('paid');
  });
});
