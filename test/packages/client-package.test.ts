/**
 * `@paysaga/client` as a backend installs it: packed with a plain `npm pack` in packages/client (its
 * `prepack` builds dist/ with tsup), then `npm install <tarball>` in an empty project, which brings its
 * two dependencies (undici and zod, from npm's cache when they are there) and nothing else; `require`
 * and `import` of the bare name both load it; the project's ESM and CommonJS sources
 * (packages/client/consumer-test/) compile with `tsc --strict` against the package's own declarations
 * (skipLibCheck off), then run against `paysaga dev`: a card checkout taken and read until final, its
 * signed event received and verified, a forged one refused, a bad request answered as a typed error.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { TEST_CARD } from '../../sandbox/test-cards';
import { FREE_PORTS, startDevProcess, stopDevProcess, type DevProcess } from '../helpers/dev-process';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');
const PACKAGE = path.join(ROOT, 'packages', 'client');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

jest.setTimeout(600_000);

let scratch: string;
let dev: DevProcess | undefined;
let packedFiles: string[] = [];

beforeAll(async () => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'paysaga-client-package-'));
  // The output of prepack's build shares stdout with npm's: the tarball is found in the folder instead.
  await run(NPM, ['pack', '--pack-destination', scratch], { cwd: PACKAGE, timeout: 300_000 });
  const tarball = fs.readdirSync(scratch).find((f) => f.endsWith('.tgz'));
  if (!tarball) throw new Error(`npm pack left no tarball in ${scratch}`);
  const listed = await run('tar', ['-tzf', path.join(scratch, tarball)]);
  packedFiles = listed.stdout
    .split('\n')
    .filter(Boolean)
    .map((f) => f.replace(/^package\//, ''))
    .sort();
  fs.writeFileSync(path.join(scratch, 'package.json'), JSON.stringify({ name: 'backend', private: true }));
  await run(NPM, ['install', '--prefer-offline', '--no-audit', '--no-fund', `./${tarball}`], {
    cwd: scratch,
    timeout: 300_000,
  });
  // The backend's own development dependency for compiling against node's types (after the install,
  // which would remove a package its package.json does not list).
  fs.mkdirSync(path.join(scratch, 'node_modules', '@types'), { recursive: true });
  fs.symlinkSync(
    path.join(ROOT, 'node_modules', '@types', 'node'),
    path.join(scratch, 'node_modules', '@types', 'node'),
    'dir',
  );
  for (const f of fs.readdirSync(path.join(PACKAGE, 'consumer-test')))
    fs.copyFileSync(path.join(PACKAGE, 'consumer-test', f), path.join(scratch, f));
});

afterAll(async () => {
  if (dev) await stopDevProcess(dev, 'SIGTERM');
  fs.rmSync(scratch, { recursive: true, force: true });
});

it('the tarball holds the built client for both module systems, with types, and nothing else of paysaga', () => {
  expect(packedFiles).toEqual(
    expect.arrayContaining([
      'dist/index.js',
      'dist/index.mjs',
      'dist/index.d.ts',
      'dist/index.d.mts',
      'package.json',
    ]),
  );
  expect(
    packedFiles.filter((f) => !f.startsWith('dist/') && f !== 'package.json' && f !== 'README.md'),
  ).toEqual([]);
  const manifest = JSON.parse(
    fs.readFileSync(path.join(scratch, 'node_modules/@paysaga/client/package.json'), 'utf8'),
  ) as { dependencies: Record<string, string> };
  // Neither Temporal nor the provider's client: a backend reaches paysaga over HTTP only.
  expect(Object.keys(manifest.dependencies).sort()).toEqual(['undici', 'zod']);
  const installed = fs.readdirSync(path.join(scratch, 'node_modules')).filter((f) => !f.startsWith('.'));
  expect(installed.sort()).toEqual(['@paysaga', '@types', 'undici', 'zod']);
  const shipped = ['index.js', 'index.mjs', 'index.d.ts', 'index.d.mts'].map((f) =>
    fs.readFileSync(path.join(scratch, 'node_modules/@paysaga/client/dist', f), 'utf8'),
  );
  for (const text of shipped) {
    expect(text).not.toContain('@temporalio/');
    // Every import is a package a backend has: nothing reaches back into this repository.
    expect(text).not.toMatch(/from ['"]\.\.?\//);
  }
});

it('plain JavaScript loads it by name with require and with import', async () => {
  const names = 'PaysagaApiClient,verifyPaysagaEvent,PaysagaApiError';
  const required = await run(
    process.execPath,
    [
      '-e',
      `const c = require('@paysaga/client'); console.log('${names}'.split(',').map((n) => typeof c[n]).join())`,
    ],
    { cwd: scratch },
  );
  const imported = await run(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import * as c from '@paysaga/client'; console.log('${names}'.split(',').map((n) => typeof c[n]).join())`,
    ],
    { cwd: scratch },
  );
  expect(required.stdout.trim()).toBe('function,function,function');
  expect(imported.stdout.trim()).toBe('function,function,function');
});

it('a scratch backend compiles against the package with tsc --strict (ESM and CommonJS)', async () => {
  const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const compiled = await run(process.execPath, [tsc, '-p', scratch], {
    cwd: scratch,
    timeout: 120_000,
  }).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? String(err) }));
  expect(compiled.stdout).toBe('');
  expect(fs.existsSync(path.join(scratch, 'out', 'backend.mjs'))).toBe(true);
  expect(fs.existsSync(path.join(scratch, 'out', 'reader.cjs'))).toBe(true);
});

it('runs against paysaga dev: checkout, read, a verified event, a refused forgery and a typed 400', async () => {
  const data = fs.mkdtempSync(path.join(os.tmpdir(), 'paysaga-client-package-dev-'));
  dev = await startDevProcess(data, FREE_PORTS);
  const env = {
    ...process.env,
    PAYSAGA_URL: dev.apiUrl,
    PAYSAGA_TOKEN: dev.token,
    TEST_CARD_NUMBER: TEST_CARD.visa,
  };
  const esm = await run(process.execPath, [path.join(scratch, 'out', 'backend.mjs')], {
    cwd: scratch,
    env,
    timeout: 180_000,
  });
  const backend = JSON.parse(esm.stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
  expect(backend).toEqual({
    sessionId: expect.stringMatching(/^ps_/),
    reference: expect.any(String),
    phase: 'succeeded',
    final: true,
    captured: 12_345,
    replayed: false,
    event: { type: 'session.succeeded', sessionId: backend.sessionId, sequence: expect.any(Number) },
    tampered: 'no_matching_signature',
    refused: { status: 400, code: 'invalid_request', fields: ['amount.amount'] },
  });
  // No card data in what a backend prints.
  expect(esm.stdout).not.toContain(TEST_CARD.visa);

  const cjs = await run(process.execPath, [path.join(scratch, 'out', 'reader.cjs')], {
    cwd: scratch,
    env,
    timeout: 120_000,
  });
  const reader = JSON.parse(cjs.stdout.trim()) as {
    created: { sessionId: string; status: number };
    again: { sessionId: string; replayed: boolean };
    read: { sessionId: string; kind: string };
  };
  expect(reader.created.status).toBe(201);
  expect(reader.again).toEqual({ sessionId: reader.created.sessionId, replayed: true });
  expect(reader.read).toMatchObject({ sessionId: reader.created.sessionId, kind: 'card_checkout' });
});
