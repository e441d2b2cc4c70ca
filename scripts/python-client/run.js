#!/usr/bin/env node
/*
 * Does the OpenAPI document make a working client in another language? Generates a Python client from
 * `/openapi.json` of a running `paysaga dev` with openapi-python-client (PyPI, pinned; installed into
 * .tools/openapi-python-client the first time) and runs scenario.py with it: an event endpoint
 * registered, a card checkout created and read until final, its signed event verified, a forged one
 * refused. The generation must be clean: a schema the generator cannot make a model of fails the run.
 *
 *   node scripts/python-client/run.js        # npm run test:python-client
 *
 * Output: test-results/python-client/ (the generator's output, the stack's log). Exits non-zero on any
 * failure; the last line says whether the scenario passed.
 */
'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { installPinnedTool } = require('../tools');
const { startDevStack } = require('../dev-stack');

const GENERATOR = 'openapi-python-client==0.29.1';
const ROOT = path.resolve(__dirname, '../..');
const INSTALL_DIR = path.join(ROOT, '.tools', 'openapi-python-client');
const REPORT_DIR = path.join(ROOT, 'test-results', 'python-client');
// The sandbox's test cards are spelled in one place (sandbox/test-cards.ts), read through the benchmarks'
// TypeScript hook: a card that needs no 3-D Secure and succeeds.
require('../ts-hook');
const FRICTIONLESS_CARD = require('../../sandbox/test-cards.ts').TEST_CARD.visa;

const python = () => process.env.PYTHON || 'python3';
const pythonEnv = (extra) => ({
  ...process.env,
  PYTHONPATH: [INSTALL_DIR, ...extra, process.env.PYTHONPATH].filter(Boolean).join(path.delimiter),
  PYTHONDONTWRITEBYTECODE: '1',
});

/** Generates the client from `doc` into `<out>/paysaga_client`; throws on any warning (the generator's output in the error). */
function generate(doc, out) {
  const res = spawnSync(
    python(),
    [
      path.join(INSTALL_DIR, 'bin', 'openapi-python-client'),
      'generate',
      '--path',
      doc,
      '--output-path',
      path.join(out, 'paysaga_client'),
      '--meta',
      'none',
      '--config',
      path.join(__dirname, 'config.yml'),
      '--overwrite',
      // A schema the generator cannot make a model of is a warning to it, and a failure here.
      '--fail-on-warning',
    ],
    { encoding: 'utf8', env: pythonEnv([]) },
  );
  const said = `${res.stdout || ''}${res.stderr || ''}`;
  fs.writeFileSync(path.join(REPORT_DIR, 'generate.log'), said);
  if (res.status !== 0) throw new Error(`the generator failed or warned (exit ${res.status}):\n${said}`);
}

async function main() {
  fs.mkdirSync(REPORT_DIR, { recursive: true });
  installPinnedTool(GENERATOR, INSTALL_DIR, path.join('bin', 'openapi-python-client'));
  const stack = await startDevStack({ name: 'python-client', logPath: path.join(REPORT_DIR, 'stack.log') });
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'paysaga-python-client-'));
  try {
    const doc = path.join(work, 'openapi.json');
    fs.writeFileSync(doc, await (await fetch(`${stack.internal}/openapi.json`)).text());
    generate(doc, work);
    console.log(
      `python client: generated (${fs.readdirSync(path.join(work, 'paysaga_client', 'models')).length} model files)`,
    );
    const res = spawnSync(python(), [path.join(__dirname, 'scenario.py')], {
      encoding: 'utf8',
      env: {
        ...pythonEnv([work]),
        PAYSAGA_URL: stack.internal,
        PAYSAGA_TOKEN: stack.token,
        TEST_CARD_NUMBER: FRICTIONLESS_CARD,
      },
      timeout: 240_000,
    });
    if (res.status !== 0) throw new Error(`scenario.py failed (exit ${res.status}):\n${res.stderr}`);
    const result = JSON.parse(res.stdout.trim().split('\n').at(-1));
    console.log(`python client: ${JSON.stringify(result)}`);
    const problems = [
      result.model !== 'Session' && `the answer is a ${result.model}, not a Session model`,
      (result.phase !== 'succeeded' || result.final !== true) && `the session ended ${result.phase}`,
      result.captured !== 4_200 && `captured ${result.captured}, not 4200`,
      (result.event?.type !== 'session.succeeded' || result.event?.sessionId !== result.sessionId) &&
        'no verified session.succeeded event for the session',
      result.forged !== 'no_matching_signature' && `a forged event was ${result.forged}`,
      res.stdout.includes(FRICTIONLESS_CARD) && 'the card number was printed',
    ].filter(Boolean);
    if (problems.length) throw new Error(problems.join('; '));
  } finally {
    await stack.stop();
    fs.rmSync(work, { recursive: true, force: true });
  }
  console.log('python client: scenario passed');
}

main().catch((err) => {
  console.error(`python client: ${err.message}`);
  console.log('python client: scenario failed');
  process.exitCode = 1;
});
