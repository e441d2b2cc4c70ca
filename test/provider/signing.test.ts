import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProviderClient, createWebhookVerifier, serializeRequestBody, signBytes } from '../../provider';
import { generateTestKeys, type TestKeys } from '../helpers/keys';
import { json, startRecordingServer } from '../helpers/recording-server';

const session = { id: 'ps_1', transaction_status: 'created' };

describe('request signing interop with openssl', () => {
  let keys: TestKeys;
  let server: Awaited<ReturnType<typeof startRecordingServer>>;
  let client: ProviderClient;
  const work = mkdtempSync(join(tmpdir(), 'paysaga-sig-'));

  beforeAll(async () => {
    keys = generateTestKeys();
    server = await startRecordingServer((_req, res) =>
      json(res, 200, { status: 'ok', session_info: session }),
    );
    client = new ProviderClient({
      baseUrl: server.url,
      projectId: 'prj_1',
      privateKey: keys.paths.partnerPrivate,
      maxRetries: 0,
    });
  });
  afterAll(async () => {
    await client.close();
    await server.close();
  });

  function opensslVerify(body: Buffer, signatureB64: string): boolean {
    const bodyFile = join(work, `body-${Math.random()}`);
    const sigFile = `${bodyFile}.sig`;
    writeFileSync(bodyFile, body);
    writeFileSync(sigFile, Buffer.from(signatureB64, 'base64'));
    try {
      execFileSync(
        'openssl',
        ['dgst', '-sha256', '-verify', keys.paths.partnerPublic, '-signature', sigFile, bodyFile],
        {
          stdio: 'pipe',
        },
      );
      return true;
    } catch {
      return false;
    }
  }

  it('signs the exact bytes it sends, verifiable by openssl', async () => {
    await client.initiate({ sum_info: { sum: 10000, currency_code: 'RUB' }, user_info: { user_id: 'u1' } });
    const req = server.requests.at(-1)!;
    expect(req.headers['x-project-id']).toBe('prj_1');
    const sig = req.headers['x-signature'] as string;
    expect(opensslVerify(req.body, sig)).toBe(true);
    // currency is sent lower-case, as the spec requires
    expect(JSON.parse(req.body.toString()).sum_info.currency_code).toBe('rub');
  });

  it('a body changed by one byte, or re-serialized with other spacing, does not verify', async () => {
    await client.initiate({ extra_info: { order: 'A-1' } });
    const req = server.requests.at(-1)!;
    const sig = req.headers['x-signature'] as string;
    const flipped = Buffer.from(req.body);
    flipped.writeUInt8(flipped.readUInt8(flipped.length - 2) ^ 0x01, flipped.length - 2);
    expect(opensslVerify(flipped, sig)).toBe(false);
    const respaced = Buffer.from(JSON.stringify(JSON.parse(req.body.toString()), null, 2));
    expect(respaced.equals(req.body)).toBe(false);
    expect(opensslVerify(respaced, sig)).toBe(false);
  });

  it('legacy header names and the submerchant header', async () => {
    const legacy = new ProviderClient({
      baseUrl: server.url,
      projectId: 'prj_legacy',
      privateKey: keys.partner.privatePem,
      legacyHeaders: true,
      submerchantId: 'sub_9',
    });
    try {
      await legacy.state({ session_id: 'ps_1' });
      const req = server.requests.at(-1)!;
      expect(req.headers['x-partner-project']).toBe('prj_legacy');
      expect(req.headers['x-project-id']).toBeUndefined();
      expect(req.headers['x-signature']).toBeUndefined();
      expect(req.headers['x-submerchant-id']).toBe('sub_9');
      expect(opensslVerify(req.body, req.headers['x-partner-sign'] as string)).toBe(true);
    } finally {
      await legacy.close();
    }
  });

  it('sends GET sbp/banks with a signed empty JSON body', async () => {
    server.setResponder((_r, res) =>
      json(res, 200, { status: 'ok', banks: [{ id: 'b1', eng_name: 'Bank', ru_name: 'Банк' }] }),
    );
    const out = await client.sbpBanks();
    expect(out.banks[0]!.id).toBe('b1');
    const req = server.requests.at(-1)!;
    expect(req.method).toBe('GET');
    expect(req.url).toBe('/api/v1/sbp/banks');
    expect(req.body.toString()).toBe('{}');
    expect(opensslVerify(req.body, req.headers['x-signature'] as string)).toBe(true);
  });

  describe('webhook verification', () => {
    const event = {
      type: 'checkout_results',
      session_info: { ...session, transaction_status: 'completed', future_field: 1 },
    };

    function opensslSign(body: Buffer): string {
      const bodyFile = join(work, `wh-${Math.random()}`);
      writeFileSync(bodyFile, body);
      return execFileSync('openssl', [
        'dgst',
        '-sha256',
        '-sign',
        keys.paths.servicePrivate,
        bodyFile,
      ]).toString('base64');
    }

    it('accepts a webhook signed by openssl with the service key, keeping unknown fields', () => {
      const verify = createWebhookVerifier([keys.paths.servicePublic]);
      const raw = Buffer.from(JSON.stringify(event));
      const result = verify(raw, opensslSign(raw));
      expect(result).toMatchObject({
        ok: true,
        keyIndex: 0,
        event: { type: 'checkout_results', session_info: { id: 'ps_1' } },
      });
    });

    it('accepts any of several service keys (rotation) and rejects the rest', () => {
      const other = generateTestKeys();
      const raw = Buffer.from(JSON.stringify(event));
      const verify = createWebhookVerifier([other.service.publicKey, keys.service.publicPem]);
      expect(verify(raw, signBytes(raw, keys.service.privateKey))).toMatchObject({ ok: true, keyIndex: 1 });
      expect(verify(raw, signBytes(raw, keys.partner.privateKey))).toMatchObject({
        ok: false,
        reason: 'bad_signature',
      });
    });

    it('rejects a missing signature, a changed byte, other spacing, and garbage', () => {
      const verify = createWebhookVerifier([keys.service.publicKey]);
      const raw = serializeRequestBody(event);
      const sig = signBytes(raw, keys.service.privateKey);
      expect(verify(raw, undefined)).toMatchObject({ ok: false, reason: 'missing_signature' });
      const changed = Buffer.from(raw);
      changed.writeUInt8(changed.readUInt8(10) ^ 0x01, 10);
      expect(verify(changed, sig)).toMatchObject({ ok: false, reason: 'bad_signature' });
      expect(verify(Buffer.from(JSON.stringify(event, null, 1)), sig)).toMatchObject({
        ok: false,
        reason: 'bad_signature',
      });
      expect(verify(raw, 'not base64 at all!')).toMatchObject({ ok: false, reason: 'bad_signature' });
    });

    it('a signed body that is not an event is rejected with the field named', () => {
      const verify = createWebhookVerifier([keys.service.publicKey]);
      const raw = Buffer.from(JSON.stringify({ type: 'checkout_results' }));
      expect(verify(raw, signBytes(raw, keys.service.privateKey))).toEqual({
        ok: false,
        reason: 'invalid_event',
        detail: 'session_info.not_null',
      });
      const notJson = Buffer.from('{oops');
      expect(verify(notJson, signBytes(notJson, keys.service.privateKey))).toMatchObject({
        reason: 'malformed_json',
      });
    });
  });
});
