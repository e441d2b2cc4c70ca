/*
 * `paysaga sandbox --config FILE [--port N]`: started as a real process through bin/paysaga.js, and
 * in-process through register() with a stand-in signal source (for the error paths).
 * Config faults are checked here too: rules given in the config file are active from the start.
 */
import { spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Command } from 'commander';
import { request } from 'undici';
import { register } from '../../cli/commands/sandbox';
import { generateTestKeys, type TestKeys } from '../helpers/keys';

jest.setTimeout(90_000);

const ROOT = resolve(__dirname, '../..');
let keys: TestKeys;

beforeAll(() => {
  keys = generateTestKeys();
});

function writeConfig(name: string, config: unknown): string {
  const file = join(keys.dir, name);
  writeFileSync(file, JSON.stringify(config));
  return file;
}

/** Relative key paths: they must resolve against the config file's folder, not the working directory. */
const validConfig = (extra: Record<string, unknown> = {}) => ({
  serviceKey: 'service_private.pem',
  projects: [{ id: 'p_cli', publicKey: 'partner_public.pem', webhooks: false }],
  timeScale: 0.01,
  ...extra,
});

test('spawned: prints the URL, serves /sandbox/health and config faults, exits 0 on SIGTERM', async () => {
  const config = writeConfig(
    'cli.json',
    validConfig({ faults: [{ kind: 'latency', ms: 5, path: 'transaction/initiate' }] }),
  );
  const child = spawn(
    process.execPath,
    [join(ROOT, 'bin/paysaga.js'), 'sandbox', '--config', config, '--port', '0'],
    {
      cwd: keys.dir, // not the repo: proves nothing depends on the working directory
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
  try {
    // The first run may build dist/ (bin/paysaga.js does that when sources are newer).
    const url = await new Promise<string>((res, rej) => {
      const timer = setTimeout(
        () => rej(new Error(`no URL printed; stdout: ${stdout} stderr: ${stderr}`)),
        75_000,
      );
      const check = () => {
        const m = /sandbox listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout);
        if (m) {
          clearTimeout(timer);
          res(m[1]!);
        }
      };
      child.stdout.on('data', check);
      void exited.then((code) => rej(new Error(`exited ${code} before listening: ${stderr}`)));
    });
    const health = await request(`${url}/sandbox/health`);
    expect(health.statusCode).toBe(200);
    expect(await health.body.json()).toMatchObject({ status: 'ok', projects: ['p_cli'] });
    const faults = (await (await request(`${url}/sandbox/faults`)).body.json()) as { rules: unknown[] };
    expect(faults.rules).toEqual([
      expect.objectContaining({ kind: 'latency', ms: 5, path: 'transaction/initiate' }),
    ]);

    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stderr).toBe('sandbox: SIGTERM, shutting down\nsandbox: stopped\n');
    await expect(request(`${url}/sandbox/health`)).rejects.toThrow();
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
});

describe('in-process through register()', () => {
  function program(signals: EventEmitter, out: string[]) {
    const p = new Command('paysaga').exitOverride().configureOutput({ writeErr: () => undefined });
    register(p, { signals, out: (l) => out.push(l), err: (l) => out.push(l) });
    return p;
  }

  test('SIGINT stops the server and the command resolves', async () => {
    const signals = new EventEmitter();
    const out: string[] = [];
    const run = program(signals, out).parseAsync([
      'node',
      'paysaga',
      'sandbox',
      '--config',
      writeConfig('inproc.json', validConfig()),
      '--port',
      '0',
    ]);
    const deadline = Date.now() + 10_000;
    while (!out.some((l) => l.startsWith('sandbox listening on ')) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    const url = out[0]!.replace('sandbox listening on ', '');
    expect((await request(`${url}/sandbox/health`)).statusCode).toBe(200);
    signals.emit('SIGINT');
    await run;
    expect(out).toContain('sandbox: stopped');
    expect(signals.listenerCount('SIGINT') + signals.listenerCount('SIGTERM')).toBe(0);
    await expect(request(`${url}/sandbox/health`)).rejects.toThrow();
  });

  test('an invalid config fails with a message naming the field; nothing listens', async () => {
    const out: string[] = [];
    const bad = writeConfig('bad.json', validConfig({ timeScale: -1 }));
    await expect(
      program(new EventEmitter(), out).parseAsync([
        'node',
        'paysaga',
        'sandbox',
        '--config',
        bad,
        '--port',
        '0',
      ]),
    ).rejects.toThrow(new Error('invalid sandbox config:\n  timeScale: Too small: expected number to be >0'));
    const badFaults = writeConfig('bad-faults.json', validConfig({ faults: [{ kind: 'latency', ms: -1 }] }));
    await expect(
      program(new EventEmitter(), out).parseAsync([
        'node',
        'paysaga',
        'sandbox',
        '--config',
        badFaults,
        '--port',
        '0',
      ]),
    ).rejects.toThrow(new Error('invalid fault rules: faults.0.ms: Too small: expected number to be >=0'));
    expect(out).toEqual([]);
  });

  test('a bad --port is a usage error', async () => {
    await expect(
      program(new EventEmitter(), []).parseAsync([
        'node',
        'paysaga',
        'sandbox',
        '--config',
        'x.json',
        '--port',
        'http',
      ]),
    ).rejects.toThrow(
      new Error(
        "error: option '--port <n>' argument 'http' is invalid. --port must be an integer 0..65535, got http",
      ),
    );
  });
});
