/**
 * One reading of a webhook's bytes. The API's verifier (provider/webhook-verifier.ts) decodes the signed
 * bytes once, as strict UTF-8, and refuses text that is not well-formed: bytes that encode no character,
 * or a JSON string holding a lone UTF-16 surrogate (`"\ud800"`, valid JSON, no text). The worker's
 * verification (activities/proof-activities.ts) refuses the same, so what it verifies and what it reads
 * are the bytes the API verified, read the same way.
 */
import { sign } from 'node:crypto';
import { createProofActivities } from '../../../activities/proof-activities';
import { createWebhookVerifier } from '../../../provider';
import { readWebhookEvent } from '../../../provider/schemas';
import { generateTestKeyPair } from '../../helpers/keys';

const provider = generateTestKeyPair();
const verify = createWebhookVerifier([provider.publicPem]);
const worker = createProofActivities(verify);
const signature = (bytes: Buffer) => sign('sha256', bytes, provider.privateKey).toString('base64');

const text = (extra: string) =>
  `{"type":"checkout_results","session_info":{"id":"ps_4242","transaction_status":"completed","note":${extra}}}`;
const loneSurrogateAt = (where: string) =>
  `${where}: a JSON string with a lone UTF-16 surrogate (\\ud800-\\udfff unpaired), not text`;

describe('a webhook body is read once, as well-formed text', () => {
  it('a signed JSON string with a lone surrogate is refused, naming where (API and worker alike)', async () => {
    for (const [escaped, where] of [
      ['"\\ud800"', 'session_info.note'],
      ['"a\\udfffb"', 'session_info.note'],
      ['"\\ud83d"', 'session_info.note'],
      ['["ok","\\udc00"]', 'session_info.note[1]'],
    ] as const) {
      const raw = Buffer.from(text(escaped), 'utf8');
      const refused = { ok: false, reason: 'ill_formed_text', detail: loneSurrogateAt(where) };
      expect(verify(raw, signature(raw))).toEqual(refused);
      const proof = await worker.verifyProviderEvent({
        body: raw.toString('utf8'),
        signature: signature(raw),
      });
      expect(proof).toEqual(refused);
    }
    // A surrogate pair escaped is a character: accepted, read as that character.
    const pair = Buffer.from(text('"\\ud83d\\ude00"'), 'utf8');
    const ok = verify(pair, signature(pair));
    expect(ok.ok && (ok.event.session_info as Record<string, unknown>).note).toBe('😀');
  });

  it('a key with a lone surrogate is refused too', () => {
    const raw = Buffer.from('{"type":"checkout_results","session_info":{"id":"ps_1","\\ud800":1}}');
    expect(verify(raw, signature(raw))).toEqual({
      ok: false,
      reason: 'ill_formed_text',
      detail: loneSurrogateAt('session_info: a key'),
    });
  });

  it.each([
    ['a lone continuation byte', [0x80]],
    ['a truncated sequence', [0xe2, 0x82]],
    ['an overlong encoding of "/"', [0xc0, 0xaf]],
    ['a surrogate encoded as UTF-8 (CESU)', [0xed, 0xa0, 0x80]],
    ['past U+10FFFF', [0xf4, 0x90, 0x80, 0x80]],
    ['0xff', [0xff]],
  ])('signed bytes that are not UTF-8 are refused: %s', (_, bytes) => {
    const raw = Buffer.concat([Buffer.from(text('"x')), Buffer.from(bytes), Buffer.from('"}}')]);
    expect(verify(raw, signature(raw))).toEqual({
      ok: false,
      reason: 'ill_formed_text',
      detail: 'body: not UTF-8 (a byte sequence that encodes no character)',
    });
  });

  it('the signature comes first: ill-formed bytes nobody signed are a bad signature, unread', () => {
    const raw = Buffer.from(text('"\\ud800"'));
    expect(verify(raw, 'AAAA')).toMatchObject({ ok: false, reason: 'bad_signature' });
  });

  it('a BOM is kept, not skipped: such a body is no JSON', () => {
    const raw = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text('"x"'))]);
    expect(verify(raw, signature(raw))).toMatchObject({ ok: false, reason: 'malformed_json' });
  });

  it('what the API signals encodes back to exactly the signed bytes, and the worker reads the same event', async () => {
    const raw = Buffer.from(text('"ü € 😀 \\u00e9 \\n"'), 'utf8');
    const v = verify(raw, signature(raw));
    if (!v.ok) throw new Error(v.detail);
    expect(Buffer.from(v.body, 'utf8').equals(raw)).toBe(true);
    const proof = await worker.verifyProviderEvent({ body: v.body, signature: signature(raw) });
    expect(proof).toEqual({ ok: true, event: v.event });
    expect((v.event.session_info as Record<string, unknown>).note).toBe('ü € 😀 é \n');
  });

  it('the worker refuses a string that is not text, even when the bytes it would encode to are signed', async () => {
    // A raw lone surrogate encodes as U+FFFD: whoever holds the key could sign those bytes, and a reader
    // of the string would see one thing while the bytes say another.
    const body = text('"\ud800"');
    const encoded = Buffer.from(body, 'utf8');
    expect(encoded.includes(Buffer.from([0xef, 0xbf, 0xbd]))).toBe(true);
    expect(await worker.verifyProviderEvent({ body, signature: signature(encoded) })).toEqual({
      ok: false,
      reason: 'ill_formed_text',
      detail: 'body: a lone UTF-16 surrogate, not text',
    });
    expect(readWebhookEvent(body)).toMatchObject({ ok: false, reason: 'ill_formed_text' });
  });

  it('any depth of nesting is walked without exhausting the stack', () => {
    const deep = `${'['.repeat(100_000)}"\\ud800"${']'.repeat(100_000)}`;
    const raw = Buffer.from(text(deep));
    expect(verify(raw, signature(raw))).toMatchObject({ ok: false, reason: 'ill_formed_text' });
  });
});
