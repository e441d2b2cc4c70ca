import { sign } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { request } from 'undici';
import { loadSandboxConfigFile, resolveSandboxConfig, SandboxConfigError, startSandbox } from '../../sandbox';
import { generateTestKeys } from '../helpers/keys';
import { startTestSandbox } from '../helpers/sandbox';
import { checkoutApproved } from './flow';
import { CARDS, cardPayment, isFinal, RUB, user } from './fixtures';

describe('sandbox: config file', () => {
  const keys = generateTestKeys();

  it('loads key paths relative to the file, applies defaults, parses keys once into KeyObjects', () => {
    const dir = mkdtempSync(join(tmpdir(), 'paysaga-sandbox-cfg-'));
    const file = join(dir, 'sandbox.json');
    writeFileSync(
      file,
      JSON.stringify({
        serviceKey: relative(dir, keys.paths.servicePrivate),
        projects: [
          { id: 'shop', publicKey: keys.paths.partnerPublic, webhookUrl: 'http://127.0.0.1:9/hooks' },
          { id: 'inline', publicKey: keys.partner.publicPem },
        ],
        timeScale: 0.5,
      }),
    );
    const cfg = loadSandboxConfigFile(file);
    expect(cfg.serviceKey.type).toBe('private');
    expect([...cfg.projects.keys()]).toEqual(['shop', 'inline']);
    expect(cfg.projects.get('shop')).toMatchObject({
      webhooks: true,
      autoApprove: false,
      hold: false,
      returnMethod: 'POST',
    });
    expect(cfg.projects.get('inline')!.publicKey.type).toBe('public');
    expect(cfg).toMatchObject({ timeScale: 0.5, qrTtlSeconds: 600, stepMs: 1000, processingMs: 0 });
  });

  it.each([
    [
      'duplicate project ids',
      { projects: [{ id: 'a' }, { id: 'a' }] },
      new Error('invalid sandbox config:\n  projects: not_unique'),
    ],
    [
      'no projects',
      { projects: [] },
      new Error('invalid sandbox config:\n  projects: Too small: expected array to have >=1 items'),
    ],
    [
      'unknown field',
      { projects: [{ id: 'a' }], tmeScale: 2 },
      new Error('invalid sandbox config:\n  (root): Unrecognized key: "tmeScale"'),
    ],
    [
      'negative timeScale',
      { projects: [{ id: 'a' }], timeScale: -1 },
      new Error('invalid sandbox config:\n  timeScale: Too small: expected number to be >0'),
    ],
    [
      'missing key file',
      { projects: [{ id: 'a', publicKey: '/nonexistent.pem' }] },
      new Error("projects[a].publicKey: ENOENT: no such file or directory, open '/nonexistent.pem'"),
    ],
  ])('refuses %s', (_name, patch, message) => {
    const base = { serviceKey: keys.service.privatePem };
    const projects = (patch.projects as Record<string, unknown>[]).map((p) => ({
      publicKey: keys.partner.publicPem,
      ...p,
    }));
    expect(() => resolveSandboxConfig({ ...base, ...patch, projects })).toThrow(SandboxConfigError);
    expect(() => resolveSandboxConfig({ ...base, ...patch, projects })).toThrow(message);
  });

  it('startSandbox takes a resolved config and listens on 127.0.0.1', async () => {
    const cfg = resolveSandboxConfig({
      serviceKey: keys.service.privatePem,
      projects: [{ id: 'a', publicKey: keys.partner.publicPem }],
    });
    const sb = await startSandbox(cfg, { port: 0 });
    try {
      expect(sb.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const health = await fetch(`${sb.url}/sandbox/health`);
      expect(await health.json()).toMatchObject({ status: 'ok', projects: ['a'] });
    } finally {
      await sb.close();
    }
  });
});

describe('sandbox: card data never leaves', () => {
  it('no PAN or CVV in answers, state or logs (trace level)', async () => {
    const keys = generateTestKeys();
    const lines: string[] = [];
    const logger = pino(
      { level: 'trace' },
      new Writable({ write: (chunk, _enc, cb) => (lines.push(String(chunk)), cb()) }),
    );
    const sb = await startSandbox(
      {
        serviceKey: keys.service.privatePem,
        projects: [{ id: 'p', publicKey: keys.partner.publicPem }],
        timeScale: 0.01,
      },
      { logger },
    );
    try {
      const body = JSON.stringify({
        payment_info: cardPayment(CARDS.threeDs),
        sum_info: RUB(100),
        user_info: user(),
      });
      const res = await request(`${sb.url}/api/v1/transaction/init/checkout`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-project-id': 'p',
          'x-signature': sign('sha256', Buffer.from(body), keys.partner.privateKey).toString('base64'),
        },
        body,
      });
      const text = await res.body.text();
      expect(JSON.parse(text).status).toBe('ok');
      expect(lines.length).toBeGreaterThan(0);
      const everything = [text, JSON.stringify(sb.state.stats()), ...lines].join('\n');
      expect(everything).not.toContain(CARDS.threeDs);
      expect(everything).not.toContain('"card_code"');
    } finally {
      await sb.close();
    }
  });

  it('the whole card flow keeps PAN and CVV out of every answer', async () => {
    const sb = await startTestSandbox();
    try {
      const id = await checkoutApproved(sb, {
        payment_info: cardPayment(CARDS.frictionless),
        sum_info: RUB(100),
        user_info: user(),
      });
      const final = await sb.waitForSession(id, isFinal);
      const dump = JSON.stringify([
        final,
        await sb.ledger(),
        await sb.stats(),
        (await sb.plain('GET', '/sandbox/events')).body,
      ]);
      expect(dump).not.toContain(CARDS.frictionless);
    } finally {
      await sb.close();
    }
  });
});
