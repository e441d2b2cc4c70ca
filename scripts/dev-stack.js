/*
 * `paysaga dev` for the tools that check the API from outside (schemathesis, the generated Python
 * client): started on a fresh data folder with every port free, its output in `logPath`; resolves once
 * dev.json names its URLs. `stop()` ends it and removes the folder.
 */
'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');

const ROOT = path.resolve(__dirname, '..');
const PORTS = ['--public-port', '--internal-port', '--sandbox-port', '--temporal-port', '--temporal-ui-port'];

async function startDevStack({ name, logPath, env = {} }) {
  const data = fs.mkdtempSync(path.join(os.tmpdir(), `paysaga-${name}-`));
  const child = spawn(
    process.execPath,
    [path.join(ROOT, 'bin', 'paysaga.js'), 'dev', '--data', data, ...PORTS.flatMap((p) => [p, '0'])],
    {
      cwd: ROOT,
      env: { ...process.env, PAYSAGA_LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  fs.mkdirSync(path.dirname(logPath), { recursive: true });
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

module.exports = { startDevStack };
