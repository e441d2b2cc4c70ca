/**
 * Several projects (PAYSAGA_PROJECTS): parsed from the environment, each use routed to one project, and
 * every call signed for the project it names.
 */
import { generateKeyPairSync, verify } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { projectFor, providerConfigFromEnv, ProviderClient } from '../../provider';

const pem = () => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    privatePem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKey,
  };
};

const base = {
  PAYSAGA_PROVIDER_URL: 'http://127.0.0.1:1',
  PAYSAGA_PROJECT_ID: 'main',
  PAYSAGA_PARTNER_PRIVATE_KEY: 'main-key.pem',
};

describe('PAYSAGA_PROJECTS', () => {
  test('routes each use to the project that claims it, everything else to the default', () => {
    const config = providerConfigFromEnv({
      ...base,
      PAYSAGA_PROJECTS: JSON.stringify([{ id: 'tds', privateKey: 'tds.pem', use: ['recurring_client'] }]),
    });
    expect(projectFor(config, 'recurring_client')).toBe('tds');
    expect(projectFor(config, 'card_checkout')).toBe('main');
    expect(projectFor(providerConfigFromEnv(base), 'recurring_client')).toBe('main');
  });

  test('refuses a project listed twice, a use claimed twice, an unknown use and JSON that is not', () => {
    const bad = (projects: unknown) => () =>
      providerConfigFromEnv({ ...base, PAYSAGA_PROJECTS: JSON.stringify(projects) });
    expect(
      bad([
        { id: 'a', privateKey: 'k' },
        { id: 'a', privateKey: 'k' },
      ]),
    ).toThrow(
      new Error('provider configuration from environment is invalid: projects.1.id: a is listed twice'),
    );
    expect(
      bad([
        { id: 'a', privateKey: 'k', use: ['payout'] },
        { id: 'b', privateKey: 'k', use: ['payout'] },
      ]),
    ).toThrow(
      new Error(
        'provider configuration from environment is invalid: projects.1.use: payout is already used by a',
      ),
    );
    expect(bad([{ id: 'a', privateKey: 'k', use: ['everything'] }])).toThrow(
      new Error(
        'provider configuration from environment is invalid: projects.0.use.0: Invalid option: expected one of "card_checkout"|"payment_form"|"fps_payment"|"fps_binding"|"recurring_payment"|"recurring_client"|"payout"|"identity_check"',
      ),
    );
    expect(() => providerConfigFromEnv({ ...base, PAYSAGA_PROJECTS: '[{' })).toThrow(
      new Error('provider configuration from environment is invalid: PAYSAGA_PROJECTS: not JSON'),
    );
  });

  test('a call is signed for the project it names; an unknown project is refused before sending', async () => {
    const main = pem();
    const tds = pem();
    const seen: { project: string; signed: boolean }[] = [];
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const project = String(req.headers['x-project-id']);
        const key = project === 'tds' ? tds.publicKey : main.publicKey;
        const signed = verify(
          'sha256',
          Buffer.concat(chunks),
          key,
          Buffer.from(String(req.headers['x-signature']), 'base64'),
        );
        seen.push({ project, signed });
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ status: 'ok', banks: [] }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const client = new ProviderClient({
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      projectId: 'main',
      privateKey: main.privatePem,
      projects: [{ id: 'tds', privateKey: tds.privatePem }],
      maxRetries: 0,
    });
    try {
      await client.call('sbpBanks', {});
      await client.call('sbpBanks', {}, { projectId: 'tds' });
      await expect(client.call('sbpBanks', {}, { projectId: 'nope' })).rejects.toThrow(
        new Error('invalid request for sbp/banks: project nope is not configured (PAYSAGA_PROJECTS)'),
      );
      expect(seen).toEqual([
        { project: 'main', signed: true },
        { project: 'tds', signed: true },
      ]);
    } finally {
      await client.close();
      await new Promise((r) => server.close(r));
    }
  });
});
