import { generateKeyPairSync, sign } from 'node:crypto';
import { request } from 'undici';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox';
import { RUB, user } from './fixtures';

describe('sandbox: request signatures', () => {
  let sb: TestSandbox;
  const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const otherPem = other.publicKey.export({ type: 'spki', format: 'pem' }).toString();

  beforeAll(async () => {
    sb = await startTestSandbox({ projects: [{ id: 'alpha' }, { id: 'beta', publicKey: otherPem }] });
  });
  afterAll(() => sb.close());

  const initiate = { sum_info: RUB(100), user_info: user() };

  it('accepts a request signed with the key of the project in X-Project-Id', async () => {
    const a = await sb.post('transaction/initiate', initiate, { projectId: 'alpha' });
    expect(a.body.status).toBe('ok');
    const b = await sb.post('transaction/initiate', initiate, { projectId: 'beta', key: other.privateKey });
    expect(b.body.status).toBe('ok');
  });

  it('accepts the legacy header names X-PARTNER-PROJECT / X-PARTNER-SIGN and X-Submerchant-Id', async () => {
    const res = await sb.post('transaction/initiate', initiate, {
      legacyHeaders: true,
      headers: { 'x-submerchant-id': 'shop-17' },
    });
    expect(res.status).toBe(200);
    expect(res.body.session_info.id).toMatch(/^ps_\d+$/);
  });

  it.each([
    ['no signature', { sign: false }, 'X-Signature.not_null'],
    ['signature by another key', { key: other.privateKey }, 'X-Signature.invalid'],
    [
      'key of project beta used for alpha',
      { projectId: 'alpha', key: other.privateKey },
      'X-Signature.invalid',
    ],
    ['unknown project', { projectId: 'nobody' }, 'X-Project-Id.unknown'],
    ['signature not Base64', { headers: { 'x-signature': 'not base64!' } }, 'X-Signature.invalid_format'],
  ])('refuses %s with 401 authentication_failed', async (_name, opts, description) => {
    const res = await sb.post('transaction/initiate', initiate, opts);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({
      status: 'error',
      error: { error_code: 'authentication_failed', error_description: description },
      error_info: { error_code: 'authentication_failed', error_description: description },
    });
  });

  it('refuses a request without project header', async () => {
    const bytes = JSON.stringify(initiate);
    const res = await request(`${sb.url}/api/v1/transaction/initiate`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-signature': sign('sha256', Buffer.from(bytes), sb.keys.partner.privateKey).toString('base64'),
      },
      body: bytes,
    });
    expect(res.statusCode).toBe(401);
    expect(
      ((await res.body.json()) as { error: { error_description: string } }).error.error_description,
    ).toBe('X-Project-Id.not_null');
  });

  it('verifies the exact bytes: a re-serialized body with the signature of the original is refused', async () => {
    const original = JSON.stringify(initiate);
    const signature = sign('sha256', Buffer.from(original), sb.keys.partner.privateKey).toString('base64');
    const reformatted = JSON.stringify(initiate, null, 2);
    const bad = await request(`${sb.url}/api/v1/transaction/initiate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-project-id': sb.projectId, 'x-signature': signature },
      body: reformatted,
    });
    expect(bad.statusCode).toBe(401);
    await bad.body.dump();
    // The same pretty-printed bytes, signed as they are, are fine: the signature covers bytes, not JSON meaning.
    const good = await sb.post('transaction/initiate', undefined, { raw: reformatted });
    expect(good.body.status).toBe('ok');
  });

  it('GET sbp/banks carries a signed empty JSON body', async () => {
    const res = await sb.get('sbp/banks');
    expect(res.status).toBe(200);
    expect(res.body.banks.length).toBeGreaterThan(0);
    expect(res.body.banks[0]).toEqual({
      id: expect.any(String),
      eng_name: expect.any(String),
      ru_name: expect.any(String),
    });
    const unsigned = await sb.get('sbp/banks', { sign: false });
    expect(unsigned.status).toBe(401);
  });
});
