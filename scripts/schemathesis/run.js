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
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { pipInstallTarget } = require('../tools');

const SCHEMATHESIS_VERSION = '4.32.5';
const ROOT = path.resolve(__dirname, '../..');
const INSTALL_DIR = path.join(ROOT, '.tools', 'schemathesis');
const MARKER_FILE = '.paysaga-installed.json';
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

function installed() {
  try {
    const marker = JSON.parse(fs.readFileSync(path.join(INSTALL_DIR, MARKER_FILE), 'utf8'));
    return marker.pin === SCHEMATHESIS_VERSION && fs.existsSync(path.join(INSTALL_DIR, 'schemathesis'));
  } catch {
    return false;
  }
}

/** Into a staging folder renamed into place, so a concurrent run never sees half an install. */
function install() {
  if (installed()) return;
  const staging = `${INSTALL_DIR}.tmp-${process.pid}`;
  fs.rmSync(staging, { recursive: true, force: true });
  console.log(`schemathesis: installing schemathesis==${SCHEMATHESIS_VERSION} into .tools/schemathesis ...`);
  const res = pipInstallTarget(`schemathesis==${SCHEMATHESIS_VERSION}`, staging, {
    deps: true,
    inherit: true,
  });
  if (!res.ok) {
    fs.rmSync(staging, { recursive: true, force: true });
    throw new Error(res.why);
  }
  fs.writeFileSync(path.join(staging, MARKER_FILE), `${JSON.stringify({ pin: SCHEMATHESIS_VERSION })}\n`);
  fs.rmSync(INSTALL_DIR, { recursive: true, force: true });
  fs.renameSync(staging, INSTALL_DIR);
}

/** `paysaga dev` on a fresh folder, every port free; resolves once dev.json names its URLs. */
async function startStack() {
  const data = fs.mkdtempSync(path.join(os.tmpdir(), 'paysaga-schemathesis-'));
  const ports = [
    '--public-port',
    '--internal-port',
    '--sandbox-port',
    '--temporal-port',
    '--temporal-ui-port',
  ];
  const child = spawn(
    process.execPath,
    [path.join(ROOT, 'bin', 'paysaga.js'), 'dev', '--data', data, ...ports.flatMap((p) => [p, '0'])],
    {
      cwd: ROOT,
      // Schemathesis sends thousands of requests without a token or with a wrong one, all from one
      // address: the cut-off after 20 refusals a minute (PAYSAGA_AUTH_MAX_FAILURES) would answer 429.
      env: {
        ...process.env,
        PAYSAGA_LOG_LEVEL: 'warn',
        PAYSAGA_AUTH_MAX_FAILURES: '1000000',
        PAYSAGA_PUBLIC_RATE_LIMIT: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const logPath = path.join(REPORT_DIR, 'stack.log');
  const log = fs.createWriteStream(logPath);
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  const stateFile = path.join(data, 'dev.json');
  const deadline = Date.now() + 240_000; // the first start after a change rebuilds dist/
  while (!fs.existsSync(stateFile)) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`paysaga dev did not come up (exit ${child.exitCode}); see ${logPath}`);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  const state = JSON.parse(fs.readFileSync(stateFile, 'utf8'));
  const stop = async () => {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((resolve) => {
        const timer = setTimeout(() => (child.kill('SIGKILL'), resolve()), 30_000);
        child.once('exit', () => (clearTimeout(timer), resolve()));
      });
    }
    fs.rmSync(data, { recursive: true, force: true });
  };
  return {
    internal: state.internalUrl,
    public: state.publicUrl,
    token: fs.readFileSync(path.join(data, 'api-token'), 'utf8').trim(),
    stop,
  };
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
