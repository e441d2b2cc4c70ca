#!/usr/bin/env node
/**
 * Records one workflow history per session kind into test/fixtures/histories/ (for replay.test.ts):
 * runs test/workflows/record-histories.test.ts with RECORD_HISTORIES=1. Extra arguments go to jest
 * (e.g. `-t "FPS payment"` to re-record one kind).
 */
'use strict';
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const jest = path.join(root, 'node_modules', '.bin', 'jest');
const result = spawnSync(jest, ['test/workflows/record-histories.test.ts', ...process.argv.slice(2)], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, RECORD_HISTORIES: '1' },
});
process.exit(result.status ?? 1);
