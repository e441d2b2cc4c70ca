#!/usr/bin/env node
/*
 * Does the OpenAPI document tell the truth? Runs schemathesis (PyPI, pinned) with `--checks all` against
 * `/openapi.json` of a running paysaga: server errors, schema-valid requests rejected, schema-violating
 * requests accepted, undocumented statuses, wrong answers to undeclared methods (405 with Allow).
 *
 *   node scripts/schemathesis/run.js                     # starts `paysaga dev` on a temp folder, bounded
 *   node scripts/schemathesis/run.js --max-time 600      # a longer pass
 *   node scripts/schemathesis/run.js --internal http://127.0.0.1:8081 --public http://127.0.0.1:8080 \
 *     --token <api token>                                # against a stack that runs already
 *
 * Two passes: the internal listener's operations against it, the public listener's (`x-paysaga-listener:
 * public`: webhooks, payer return) against the public listener; each bounded by --max-time seconds and
 * --max-examples cases per operation. schemathesis is installed into .tools/schemathesis the first time
 * (`pip install --target`, like the Temporal CLI in scripts/setup.js). Reports: test-results/schemathesis/.
 * Exits non-zero when schemathesis found anything; the last line says how many passes failed.
 */
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { installPinnedTool } = require('../tools');
const { startDevStack } = require('../dev-stack');

const SCHEMATHESIS_VERSION = '4.32.5';
const ROOT = path.resolve(__dirname, '../..');
const INSTALL_DIR = path.join(ROOT, '.tools', 'schemathesis');
const REPORT_DIR = path.join(ROOT, 'test-results', 'schemathesis');
const PUBLIC_PATHS = '^/(webhooks|return)/';

function args(argv) {
  // One worker: hypothesis' lambda-source cache is not thread-safe on Python 3.11 (with two, a run met
  // "AST constructor recursion depth mismatch" runtime errors in the coverage phase).
  const opts = { maxTime: 240, publicMaxTime: 45, maxExamples: 25, workers: 1, seed: undefined };
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (value === undefined) throw new Error(`${flag} needs a value`);
    if (flag === '--max-time') opts.maxTime = Number(value);
    else if (flag === '--public-max-time') opts.publicMaxTime = Number(value);
    else if (flag === '--max-examples') opts.maxExamples = Number(value);
    else if (flag === '--workers') opts.workers = Number(value);
    else if (flag === '--seed') opts.seed = value;
    else if (flag === '--internal') opts.internal = value.replace(/\/$/, '');
    else if (flag === '--public') opts.public = value.replace(/\/$/, '');
    else if (flag === '--token') opts.token = value;
    else throw new Error(`unknown argument ${flag}`);
  }
  return opts;
}

const python = () => process.env.PYTHON || 'python3';

/** schemathesis, pinned, in .tools/schemathesis (installed the first time). */
const install = () => installPinnedTool(`schemathesis==${SCHEMATHESIS_VERSION}`, INSTALL_DIR, 'schemathesis');

/** `paysaga dev` on a fresh folder (scripts/dev-stack.js). */
function startStack() {
  // Schemathesis sends thousands of requests without a token or with a wrong one, all from one
  // address: the cut-off after 20 refusals a minute (PAYSAGA_AUTH_MAX_FAILURES) would answer 429.
  return startDevStack({
    name: 'schemathesis',
    logPath: path.join(REPORT_DIR, 'stack.log'),
    env: { PAYSAGA_AUTH_MAX_FAILURES: '1000000', PAYSAGA_PUBLIC_RATE_LIMIT: '0' },
  });
}

function schemathesis(name, schemaUrl, filter, opts, extra) {
  const argv = [
    path.join(INSTALL_DIR, 'bin', 'st'),
    'run',
    schemaUrl,
    '--checks',
    'all',
    '--max-examples',
    String(opts.maxExamples),
    '--workers',
    String(opts.workers),
    '--generation-database',
    'none',
    // A long poll waits up to 25 s (?wait=), a replay takes seconds on a loaded machine: a slow answer
    // is no wrong answer here (speed is measured in bench/), so neither limit may fail the run.
    '--request-timeout',
    '90',
    '--max-response-time',
    '90',
    // A time in the document is a date-time of the years 2000-2099 (`format` and a `pattern`): the
    // generator makes date-times of any year and drops all but about one in a hundred, which on some
    // seeds trips its "too many examples filtered out" health check (POST /v1/subscriptions). That says
    // nothing about the API: the examples it keeps are still sent and checked.
    '--suppress-health-check',
    'filter_too_much',
    '--no-color',
    '--report',
    'junit',
    '--report-junit-path',
    path.join(REPORT_DIR, `${name}.junit.xml`),
    ...(opts.seed ? ['--seed', opts.seed] : []),
    ...filter,
    ...extra,
  ];
  console.log(
    `\nschemathesis (${name}): st ${argv
      .slice(1)
      .join(' ')
      .replace(/Bearer \S+/, 'Bearer ***')}`,
  );
  return new Promise((resolve) => {
    const child = spawn(python(), argv, {
      cwd: ROOT,
      stdio: 'inherit',
      env: {
        ...process.env,
        PYTHONPATH: [INSTALL_DIR, __dirname, process.env.PYTHONPATH].filter(Boolean).join(path.delimiter),
        SCHEMATHESIS_HOOKS: 'hooks',
      },
    });
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

async function main() {
  const opts = args(process.argv.slice(2));
  fs.mkdirSync(REPORT_DIR, { recursive: true });
  install();
  const stack = opts.internal ? { ...opts, stop: async () => {} } : await startStack();
  let failed = 0;
  try {
    const schema = `${stack.internal}/openapi.json`;
    const internal = await schemathesis('internal', schema, ['--exclude-path-regex', PUBLIC_PATHS], opts, [
      '--url',
      stack.internal,
      '--header',
      `Authorization: Bearer ${stack.token}`,
      '--max-time',
      String(opts.maxTime),
    ]);
    const pub = await schemathesis('public', schema, ['--include-path-regex', PUBLIC_PATHS], opts, [
      '--url',
      stack.public,
      '--max-time',
      String(opts.publicMaxTime),
    ]);
    failed = [internal, pub].filter((code) => code !== 0).length;
  } finally {
    await stack.stop();
  }
  console.log(`schemathesis: ${failed === 0 ? 'no failures' : `${failed} of 2 passes found failures`}`);
  process.exitCode = failed === 0 ? 0 : 1;
}

main().catch((err) => {
  console.error(`schemathesis: ${err.message}`);
  process.exitCode = 1;
});
