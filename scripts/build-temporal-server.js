#!/usr/bin/env node
/*
 * Builds the Temporal server and its SQL schema tool from source for `npm run test:cluster`, once:
 *
 *   .tools/temporal-server/bin/temporal-server     (go.temporal.io/server/cmd/server)
 *   .tools/temporal-server/bin/temporal-sql-tool   (go.temporal.io/server/cmd/tools/sql; schemas embedded)
 *
 * `go install <module>/...@v1.32.0`, the server version the pinned Temporal CLI (1.9.1) embeds, with the
 * build tag `disable_grpc_modules` that Temporal's own Makefile builds with (leaves out the gRPC client of
 * cloud.google.com/go/storage, which the server does not use: less to compile, a smaller binary). A marker file names the version and tags; when it matches, nothing is built (a
 * second run takes milliseconds). The build goes to a staging folder renamed into place, so an interrupted
 * build never leaves a half-made install. Quiet when there is nothing to do.
 *
 * Skipped when PAYSAGA_CLUSTER_ADDRESS is set: the cluster test then runs against that cluster.
 *
 * Exports the paths for test/cluster/ (temporalServerBinaries()).
 */
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { executableFile } = require('./tools');

/** The server version Temporal CLI 1.9.1 (scripts/setup.js) embeds in `temporal server start-dev`. */
const TEMPORAL_SERVER_VERSION = '1.32.0';
const GO_MODULE = 'go.temporal.io/server';
const GO_PACKAGES = ['cmd/server', 'cmd/tools/sql'];
const BUILD_TAGS = 'disable_grpc_modules';
/** What `go install` names each package's binary, and the name it gets here (Temporal's release names). */
const RENAMES = { server: 'temporal-server', sql: 'temporal-sql-tool' };

const ROOT = path.resolve(__dirname, '..');
const INSTALL_DIR = path.join(ROOT, '.tools', 'temporal-server');
const MARKER_FILE = '.paysaga-installed.json';

function temporalServerBinaries(root = ROOT) {
  const bin = path.join(root, '.tools', 'temporal-server', 'bin');
  return { server: path.join(bin, 'temporal-server'), sqlTool: path.join(bin, 'temporal-sql-tool') };
}

function readMarker(dir) {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, MARKER_FILE), 'utf8'));
  } catch {
    return undefined;
  }
}

function installReady(root = ROOT) {
  const marker = readMarker(path.join(root, '.tools', 'temporal-server'));
  const bins = temporalServerBinaries(root);
  return (
    marker !== undefined &&
    marker.version === TEMPORAL_SERVER_VERSION &&
    marker.tags === BUILD_TAGS &&
    executableFile(bins.server) &&
    executableFile(bins.sqlTool)
  );
}

class BuildError extends Error {}

function build() {
  const go = spawnSync('go', ['version'], { encoding: 'utf8' });
  if (go.error || go.status !== 0)
    throw new BuildError(
      'Go is needed to build the Temporal server for the cluster test (https://go.dev/dl/): `go version` failed',
    );
  const staging = `${INSTALL_DIR}.tmp-${process.pid}`;
  fs.rmSync(staging, { recursive: true, force: true });
  fs.mkdirSync(path.join(staging, 'bin'), { recursive: true });
  const specs = GO_PACKAGES.map((p) => `${GO_MODULE}/${p}@v${TEMPORAL_SERVER_VERSION}`);
  console.log(
    `paysaga: building temporal-server and temporal-sql-tool ${TEMPORAL_SERVER_VERSION} from source ` +
      `(${go.stdout.trim()}; several minutes on 2 cores, once) ...`,
  );
  const started = Date.now();
  // Only the module proxy is reachable from CI machines, not the checksum database; the server's go.sum
  // still pins every dependency (as in scripts/setup.js). CGO is not needed (pure-Go SQLite driver).
  const env = {
    ...process.env,
    GOBIN: path.join(staging, 'bin'),
    CGO_ENABLED: process.env.CGO_ENABLED || '0',
  };
  if (env.GOSUMDB === undefined) env.GOSUMDB = 'off';
  try {
    const res = spawnSync('go', ['install', '-tags', BUILD_TAGS, ...specs], {
      env,
      cwd: staging, // outside any module: `go install pkg@version` ignores the current module anyway
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (res.error || res.status !== 0) {
      const out = `${res.stdout || ''}${res.stderr || ''}`.trim().split('\n').slice(-20).join('\n');
      throw new BuildError(`go install ${specs.join(' ')} failed:\n${res.error ? res.error.message : out}`);
    }
    for (const [from, to] of Object.entries(RENAMES)) {
      fs.renameSync(path.join(staging, 'bin', from), path.join(staging, 'bin', to));
    }
    const marker = {
      version: TEMPORAL_SERVER_VERSION,
      tags: BUILD_TAGS,
      go: go.stdout.trim(),
      buildSeconds: Math.round((Date.now() - started) / 1000),
      at: new Date().toISOString(),
    };
    fs.writeFileSync(path.join(staging, MARKER_FILE), `${JSON.stringify(marker, null, 2)}\n`);
    if (installReady()) return; // another build finished first
    fs.rmSync(INSTALL_DIR, { recursive: true, force: true }); // other version or broken
    fs.renameSync(staging, INSTALL_DIR);
    console.log(`paysaga: built in ${marker.buildSeconds} s into ${path.relative(ROOT, INSTALL_DIR)}/bin`);
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

function main() {
  if (process.env.PAYSAGA_CLUSTER_ADDRESS) {
    console.log('paysaga: PAYSAGA_CLUSTER_ADDRESS is set: no local Temporal server to build');
    return;
  }
  if (!installReady()) build();
}

module.exports = {
  TEMPORAL_SERVER_VERSION,
  BUILD_TAGS,
  temporalServerBinaries,
  installReady,
};

if (require.main === module) {
  try {
    main();
  } catch (err) {
    if (err instanceof BuildError) {
      console.error(`paysaga: error: ${err.message}`);
      process.exit(1);
    }
    throw err;
  }
}
