#!/usr/bin/env node
/*
 * Entry point of the `paysaga` command: runs the compiled CLI in dist/. When dist/ is missing or older
 * than a TypeScript source it is built from (the dirs in tsconfig.build.json's "include"), it first runs
 * `tsc -p tsconfig.build.json` once (a few seconds) and says so on stderr. PAYSAGA_REBUILD=1 forces a
 * build, PAYSAGA_REBUILD=0 skips the freshness check.
 */
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const root = path.resolve(__dirname, '..');
const entry = path.join(root, 'dist', 'cli', 'main.js');
const buildConfig = path.join(root, 'tsconfig.build.json');

function newestSourceMtime() {
  let include = [];
  try {
    include = JSON.parse(fs.readFileSync(buildConfig, 'utf8')).include || [];
  } catch {
    return 0;
  }
  let newest = 0;
  const walk = (dir) => {
    let entries;
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const full = path.join(dir, e.name);
      if (e.isDirectory()) walk(full);
      else if (e.name.endsWith('.ts')) newest = Math.max(newest, fs.statSync(full).mtimeMs);
    }
  };
  for (const dir of include) walk(path.join(root, dir));
  return newest;
}

function needsBuild() {
  if (process.env.PAYSAGA_REBUILD === '1') return true;
  if (!fs.existsSync(entry)) return true;
  if (process.env.PAYSAGA_REBUILD === '0') return false;
  return newestSourceMtime() > fs.statSync(entry).mtimeMs;
}

if (needsBuild()) {
  let tsc;
  try {
    tsc = require.resolve('typescript/bin/tsc', { paths: [root] });
  } catch {
    console.error('paysaga: dist/ needs building but TypeScript is not installed: run `npm ci` first');
    process.exit(1);
  }
  console.error('paysaga: building dist/ (tsc -p tsconfig.build.json) ...');
  const res = spawnSync(process.execPath, [tsc, '-p', buildConfig], {
    cwd: root,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  // tsc emits even with type errors: go on if the entry point exists, but say so.
  if (!fs.existsSync(entry)) {
    console.error(`paysaga: build failed (tsc exit ${res.status}); ${path.relative(root, entry)} is missing`);
    process.exit(1);
  }
  if (res.status !== 0) {
    console.error(`paysaga: warning: tsc exited with ${res.status}; running what it emitted`);
    fs.utimesSync(entry, new Date(), new Date()); // don't rebuild on every run because of the errors
  }
}

require(entry)
  .main(process.argv)
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  });
